import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BILLING_SOURCES, IMPORT_TYPES, PERSPECTIVES } from '../../src/contract/common.js';
import { run } from '../../src/main.js';
import { call, expectContract, startTestService, type TestService } from '../helpers/service.js';
import { createTestContext } from '../helpers/test-context.js';
import { Gen, INVALID_UTF8, mulberry32 } from './generators.js';

/**
 * Fuzz run of the CLI's input parsing: FUZZ_CASES (default 10,000) generated command lines, each run
 * in-process through main.run (commander, the option parsers, the readers of src/input, the client's
 * request validation) against the local service, which counts every request it receives. For every case:
 *  - run() never throws and never reports an unexpected (non-CliError) failure;
 *  - a usage error (exit 2) means no request reached the service;
 *  - what the seed does not allow is refused before sending; what breaks only the local service's own
 *    rules (its slug, its scope grammar, its bounds: the contract's serviceBody) is sent, and the
 *    service's 422 is reported with its list of field errors. An exit 2 after a request is allowed only
 *    as such a reported 422 of the service's own rules;
 *  - a case built to be invalid (known-bad value, unknown flag, broken JSON, bad UTF-8) exits 2, nothing sent.
 * Replay: FUZZ_SEED=<seed> FUZZ_CASES=<n> npx vitest run test/fuzz/input-fuzz.test.ts
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20261122) >>> 0;
const CASES = Number(process.env.FUZZ_CASES ?? 10_000);
const FACE = 'fuzz-face';

interface Case {
  index: number;
  kind: string;
  argv: string[];
  stdin?: string | Buffer;
  /** Written to FILE before the run; argv refers to it as FILE. */
  file?: string | Buffer;
  /** Built to be refused before sending. */
  invalid: boolean;
}

let service: TestService;
let threadId: string;
let dir: string;
beforeAll(async () => {
  service = await startTestService({
    fetchUrl: async (url) => ({ text: `Imported text from ${url}.`, finalUrl: url, contentType: 'text/plain' }),
  });
  const key = service.key('pro');
  expectContract('createFace', await call(service, 'createFace', { key, body: { name: 'Fuzz', alias: FACE } }), 201);
  const thread = expectContract(
    'createThread',
    await call(service, 'createThread', { key, body: { alias: FACE, label: 'fuzz' } }),
    201,
  );
  threadId = thread.thread_id ?? thread.id;
  if (typeof threadId !== 'string') throw new Error(`no thread id in ${JSON.stringify(thread)}`);
  dir = mkdtempSync(join(tmpdir(), 'facectl-fuzz-'));
});
afterAll(async () => {
  await service?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const BAD = {
  days: ['1.5', 'ten', '', '1e2', '0x10'],
  usd: ['-1', 'abc', '1e999', '', '$5', '1,5'],
  scopes: ['v2:*', 'v1:', ',', 'v1:*,admin', 'faces'],
  alias: ['', ' ', '   '],
  json: ['{', '[1,2]', 'null', '"text"', '{"a":}', '{"a":1,}', "{'a':1}", '42'],
  perspective: ['second-person', 'First-Person', '', 'first person'],
  billing: ['cash', 'OAUTH', '', 'credit'],
  type: ['', ' '],
};

function sometimes(g: Gen, valid: () => string, bad?: readonly string[]): string {
  const roll = g.rng();
  if (roll < 0.55) return valid();
  if (roll < 0.8) return g.mutate(valid());
  if (bad && roll < 0.9) return g.pick(bad);
  return g.text();
}

/** A flag whose value is one of the known-bad ones: the case must be refused. */
function poison(g: Gen, flags: Record<string, readonly string[]>): [string, string] {
  const flag = g.pick(Object.keys(flags));
  return [flag, g.pick(flags[flag] as readonly string[])];
}

/** --alias with the fuzz face, sometimes mutated or a known-bad one. */
function alias(g: Gen): [string, string] {
  return ['--alias', sometimes(g, () => FACE, BAD.alias)];
}

function addFlags(g: Gen, argv: string[], flags: Record<string, () => string>, p = 0.5): void {
  for (const [flag, value] of Object.entries(flags)) if (g.chance(p)) argv.push(flag, value());
}

function validMessages(g: Gen): unknown[] {
  return Array.from({ length: g.int(0, 4) }, (_, i) => ({
    role: g.pick(['user', 'assistant', 'interviewer']),
    content: `message ${i} ${g.text(10)}`,
    from: g.pick(['Ada', 'Interviewer', 'B']),
  }));
}

function validDocument(g: Gen): Record<string, unknown> {
  const doc: Record<string, unknown> = {
    alias: FACE,
    label: `label ${g.int(0, 99)}`,
    content: `Some text ${g.text(40)}`,
  };
  if (g.chance(0.3)) doc.perspective = g.pick(PERSPECTIVES);
  return doc;
}

function buildCase(g: Gen, index: number): Case {
  const invalid = g.chance(0.3);
  const kind = g.pick(['keys', 'faces', 'threads', 'import', 'docs-flags', 'docs-json', 'docs-ndjson', 'messages']);
  const argv: string[] = [];
  const c: Case = { index, kind, argv, invalid };
  switch (kind) {
    case 'keys': {
      argv.push('keys', 'create');
      addFlags(g, argv, {
        '--name': () => sometimes(g, () => `key ${index}`),
        '--expires-in-days': () => sometimes(g, () => String(g.int(1, 365)), BAD.days),
        '--scopes': () => sometimes(g, () => g.pick(['v1:*', 'v1:faces', 'v1:keys:read,v1:compile:write']), BAD.scopes),
        '--budget-usd': () => sometimes(g, () => g.pick(['0', '5', '7.50', '0.01', '.5']), BAD.usd),
        '--allowed-face-ids': () => sometimes(g, () => 'face_a,face_b'),
        '--allowed-llm-models': () => sometimes(g, () => 'gpt-x, claude-y'),
      });
      if (invalid)
        argv.push(...poison(g, { '--expires-in-days': BAD.days, '--budget-usd': BAD.usd, '--scopes': BAD.scopes }));
      break;
    }
    case 'faces': {
      argv.push(
        'faces',
        'create',
        '--name',
        sometimes(g, () => `Face ${index}`),
      );
      argv.push(
        '--alias',
        sometimes(g, () => `fz-${index}`, BAD.alias),
      );
      addFlags(g, argv, {
        '--default-tools': () => sometimes(g, () => 'search,calc'),
        '--default-model': () => sometimes(g, () => 'model-1'),
        '--formula': () => sometimes(g, () => 'f(x)'),
      });
      if (g.chance(0.5)) {
        const facts = sometimes(g, () => JSON.stringify({ born: 1815, city: g.text(8) }), BAD.json);
        if (g.chance(0.5)) argv.push('--basic-facts', facts);
        else {
          argv.push('--basic-facts', '-');
          c.stdin = facts;
        }
      }
      if (invalid) argv.push(...poison(g, { '--alias': BAD.alias, '--basic-facts': BAD.json }));
      break;
    }
    case 'threads': {
      argv.push('threads', 'create', ...alias(g));
      argv.push(
        '--label',
        sometimes(g, () => `thread ${index}`),
      );
      if (g.chance(0.5))
        argv.push(
          '--interviewer-billing-source',
          sometimes(g, () => g.pick(BILLING_SOURCES), BAD.billing),
        );
      if (invalid) argv.push(...poison(g, { '--alias': BAD.alias, '--interviewer-billing-source': BAD.billing }));
      break;
    }
    case 'import': {
      argv.push(
        'import',
        sometimes(g, () => FACE),
        sometimes(g, () => `https://example.com/doc-${index}.txt`),
      );
      addFlags(g, argv, {
        '--type': () => sometimes(g, () => g.pick(IMPORT_TYPES), BAD.type),
        '--perspective': () => sometimes(g, () => g.pick(PERSPECTIVES), BAD.perspective),
        '--face-speaker': () => sometimes(g, () => 'Ada'),
      });
      if (invalid) argv.push(...poison(g, { '--type': BAD.type, '--perspective': BAD.perspective }));
      break;
    }
    case 'docs-flags': {
      argv.push(
        'docs',
        'submit',
        ...alias(g),
        '--label',
        sometimes(g, () => 'notes'),
      );
      if (g.chance(0.3))
        argv.push(
          '--perspective',
          sometimes(g, () => g.pick(PERSPECTIVES), BAD.perspective),
        );
      if (g.chance(0.5))
        argv.push(
          '--content',
          sometimes(g, () => `Text ${g.text(60)}`),
        );
      else {
        argv.push('-');
        c.stdin = g.chance(0.1) ? g.pick(INVALID_UTF8) : sometimes(g, () => `Plain text ${g.text(80)}`);
        if (g.chance(0.3)) argv.push('--format', 'text');
      }
      if (invalid) argv.push(...poison(g, { '--alias': BAD.alias, '--perspective': BAD.perspective }));
      break;
    }
    case 'docs-json': {
      argv.push('docs', 'submit', '-', '--format', 'json');
      const doc = validDocument(g);
      let text = JSON.stringify(doc);
      if (g.chance(0.4)) text = g.mutate(text);
      else if (g.chance(0.2)) text = JSON.stringify(g.json());
      c.stdin = text;
      if (invalid) c.stdin = g.chance(0.5) ? g.pick(BAD.json) : g.pick(INVALID_UTF8);
      break;
    }
    case 'docs-ndjson': {
      // A file is checked whole before anything is sent (stdin batches send the lines before a bad one).
      argv.push('docs', 'submit', '--file', 'FILE', '--concurrency', String(g.int(1, 8)));
      if (g.chance(0.5)) argv.push('--format', 'ndjson');
      const lines = Array.from({ length: g.int(1, 5) }, () => JSON.stringify(validDocument(g)));
      if (g.chance(0.4)) {
        const at = g.int(0, lines.length - 1);
        lines[at] = g.chance(0.5) ? g.mutate(lines[at] as string) : JSON.stringify(g.json());
      }
      if (invalid)
        lines.splice(
          g.int(0, lines.length),
          0,
          g.pick(['{', '{"alias": 5, "label": "x", "content": "y"}', '[]', '{"content": ""}']),
        );
      c.file = `${lines.join('\n')}\n`;
      break;
    }
    default: {
      argv.push(
        'threads',
        'replace-messages',
        sometimes(g, () => threadId),
      );
      const list = validMessages(g);
      let text = JSON.stringify(g.chance(0.5) ? list : { messages: list });
      if (g.chance(0.4)) text = g.mutate(text);
      else if (g.chance(0.15)) text = JSON.stringify(g.json());
      if (invalid) {
        text = g.pick([
          '{',
          '[{"role": 5, "content": "x", "from": "a"}]',
          '{"messages": "x"}',
          '[{"role": "user", "content": "x"}]',
          '[{"role": "", "content": "x", "from": "a"}]',
          '[1, 2]',
        ]);
      }
      if (g.chance(0.5)) {
        argv.push('-');
        c.stdin = text;
      } else {
        argv.push('--file', 'FILE');
        c.file = text;
      }
    }
  }
  if (g.chance(0.5)) argv.push('--json');
  // A stray flag or argument is a usage error commander must report without running anything.
  if (g.chance(0.05)) {
    argv.splice(g.int(1, argv.length), 0, g.pick(['--bogus-flag', '--alias']));
    if (argv.includes('--bogus-flag')) c.invalid = true;
  }
  return c;
}

interface Outcome {
  code: number;
  requests: number;
  stderr: string;
}

async function runCase(c: Case): Promise<Outcome> {
  const file = join(dir, 'input');
  if (c.file !== undefined) writeFileSync(file, c.file);
  // A process receives its arguments as bytes that Node decodes as UTF-8, so an argument can never hold
  // a lone surrogate (a mutation may cut an emoji in half); pass them as a real process would see them.
  const argv = c.argv.map((arg) => (arg === 'FILE' ? file : Buffer.from(arg, 'utf8').toString('utf8')));
  const tc = createTestContext({
    baseUrl: service.baseUrl,
    apiKey: service.key('pro'),
    now: '2026-11-22T12:00:00Z',
    ...(c.stdin === undefined ? {} : { stdin: c.stdin }),
  });
  const before = service.stats.requests;
  try {
    const code = await run(argv, tc.ctx);
    return { code, requests: service.stats.requests - before, stderr: tc.stderr() };
  } finally {
    await tc.close();
  }
}

/** What is wrong with an outcome, or undefined when it is one of the allowed ones. */
function verdict(c: Case, o: Outcome): string | undefined {
  if (/unexpected failure|internal_error/.test(o.stderr)) return 'crash (unexpected failure)';
  if (o.requests === 0) {
    if (o.code === 2) return undefined;
    if (c.invalid) return `invalid input not refused (exit ${o.code})`;
    return o.code === 0 ? undefined : `exit ${o.code} without any request`;
  }
  if (c.invalid) return `invalid input sent (${o.requests} request(s), exit ${o.code})`;
  if (o.code === 2) {
    // Allowed: the service's own rule refused it, and the CLI listed the field errors it answered.
    if (/status: 422 validation_error\n {2}- \S/.test(o.stderr)) return undefined;
    // Under --json the same report is the one error document: status 422 and its list of fields.
    if (reportedAsJson422(o.stderr)) return undefined;
    return `the service refused what the CLI sent as invalid (exit 2 after ${o.requests} request(s))`;
  }
  // Sent and answered: created (0), or refused for a reason that is not the input's shape.
  return [0, 4, 5, 6].includes(o.code) ? undefined : `exit ${o.code} after a request`;
}

describe('input fuzz', () => {
  it(
    `${CASES} generated command lines: no crash, nothing sent for invalid input (seed ${SEED})`,
    async () => {
      const g = new Gen(mulberry32(SEED));
      const problems: string[] = [];
      const kinds = new Map<string, number>();
      const tally = { refused: 0, sent: 0, invalidBuilt: 0, requests: 0, crashes: 0, invalidSent: 0 };
      for (let i = 0; i < CASES; i++) {
        const c = buildCase(g, i);
        if (c.invalid) tally.invalidBuilt++;
        let outcome: Outcome;
        try {
          outcome = await runCase(c);
        } catch (error) {
          tally.crashes++;
          problems.push(`#${i} ${c.kind} threw ${(error as Error).stack}: ${JSON.stringify(c)}`);
          continue;
        }
        tally.requests += outcome.requests;
        if (outcome.requests > 0) tally.sent++;
        else tally.refused++;
        const wrong = verdict(c, outcome);
        if (wrong) {
          const what = wrong.replace(/\d+ request\(s\)/, 'N request(s)');
          kinds.set(`${c.kind}: ${what}`, (kinds.get(`${c.kind}: ${what}`) ?? 0) + 1);
          if (wrong.startsWith('crash')) tally.crashes++;
          if (/sent|refused what/.test(wrong)) tally.invalidSent++;
          if (problems.length < 20) {
            problems.push(
              `#${i} ${c.kind}: ${wrong}\n  argv: ${JSON.stringify(c.argv)}\n  stdin/file: ${JSON.stringify(String(c.stdin ?? c.file ?? '')).slice(0, 300)}\n  stderr: ${outcome.stderr.slice(0, 400)}`,
            );
          } else if (problems.length === 20) problems.push('(further problems not listed)');
        }
      }
      process.stdout.write(
        `fuzz: seed=${SEED} cases=${CASES} refused-before-sending=${tally.refused} sent=${tally.sent} ` +
          `built-invalid=${tally.invalidBuilt} requests=${tally.requests} crashes=${tally.crashes} ` +
          `invalid-input-requests=${tally.invalidSent} by-route=${JSON.stringify(service.stats.byRoute)}\n`,
      );
      if (kinds.size > 0) process.stdout.write(`fuzz problems by kind: ${JSON.stringify(Object.fromEntries(kinds))}\n`);
      expect(problems, `replay with FUZZ_SEED=${SEED} FUZZ_CASES=${CASES}`).toEqual([]);
      // The run exercised both sides: inputs refused before sending, and inputs sent and accepted.
      expect(tally.refused).toBeGreaterThan(CASES / 10);
      expect(tally.sent).toBeGreaterThan(CASES / 10);
    },
    Math.max(120_000, CASES * 30),
  );
});

function reportedAsJson422(stderr: string): boolean {
  try {
    const { error } = JSON.parse(stderr) as { error?: { status?: number; detail?: unknown } };
    return error?.status === 422 && Array.isArray(error.detail) && error.detail.length > 0;
  } catch {
    return false;
  }
}
