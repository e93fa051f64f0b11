import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, makeConfigDir, runCli } from '../helpers/run-cli.js';
import { requestCount } from '../helpers/command-harness.js';
import { useService } from '../helpers/service-suite.js';
import { cliAt, ensureBuilt, type FaultServer, runIn, startFaultServer, stored, tempDir, tempFile } from './support.js';

// Cases 1-12 of docs/reliability.md: bad input is refused before anything is sent (exit 2).

let server: FaultServer;
beforeAll(async () => {
  ensureBuilt();
  server = await startFaultServer();
});
afterAll(() => server.close());
const service = useService({}, { faces: ['ada-hint'] });

/** Runs the bin and asserts exit 2, a message matching `pattern`, and no request at the server. */
async function refused(args: string[], pattern: RegExp, stdin?: string) {
  const before = server.requests.length;
  const result = await cliAt(server, args, stdin === undefined ? {} : { stdin });
  expect(result.code, result.stderr).toBe(2);
  expect(result.stderr).toMatch(pattern);
  expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
  expect(server.requests.length).toBe(before);
  return result;
}

const DOC = ['docs', 'submit', '--alias', 'ada-x', '--label', 'notes'];

describe('input', () => {
  it('a JSON array named -docs.json, a label starting with -: the batch hint pasted as printed reads neither as an option', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, '-docs.json'), JSON.stringify([{ content: 'one' }, { content: 'two' }]));
    const before = server.requests.length;
    const result = await cliAt(server, ['docs', 'submit', '--file', '-docs.json', '--alias', 'ada-x', '--label=--x'], {
      cwd: dir,
    });
    expect(result.code, result.stderr).toBe(2);
    // jq would read -docs.json as an option, and facectl `--label --x` as two flags (a ring pasted both).
    expect(result.stderr).toContain(
      "send them as a batch: jq -c '.[]' ./-docs.json | facectl docs submit --format ndjson --alias ada-x --label=--x -\n",
    );
    expect(server.requests.length).toBe(before);
  });

  it('a JSON array with --base-url, --profile, --concurrency 8 and --json: the batch hint, run by a shell as printed, stores them in that service', async () => {
    const dir = tempDir();
    const docs = [1, 2, 3].map((i) => ({ label: `hint-${i}`, content: `document ${i}` }));
    writeFileSync(join(dir, 'docs.json'), JSON.stringify(docs));
    // The key is profile work's, saved for the service; the environment names neither the URL nor a key.
    const env = { FACECTL_CONFIG_DIR: makeConfigDir() };
    const url = service.baseUrl;
    const login = await runCli(['auth', 'login', '--profile', 'work', '--base-url', url, '--api-key-stdin'], {
      env,
      stdin: `${service.key('pro')}\n`,
    });
    expect(login.code, login.stderr).toBe(0);
    const globals = ['--base-url', url, '--profile', 'work', '--concurrency', '8', '--json'];
    const result = await runCli(['docs', 'submit', '--file', 'docs.json', '--alias', 'ada-hint', ...globals], {
      env,
      cwd: dir,
    });
    expect(result.code, result.stderr).toBe(2);
    const { hint } = (JSON.parse(result.stderr) as { error: { hint: string } }).error;
    // Without --base-url and --profile a ring's paste went to the default URL (exit 8, nothing stored).
    expect(hint).toBe(
      "send them as a batch: jq -c '.[]' docs.json | facectl docs submit --format ndjson --alias ada-hint " +
        `--concurrency 8 --json --base-url ${url} --profile work -`,
    );
    expect(stored(service, 'hint-')).toEqual([]);

    // Run by a shell, word for word, with facectl on the PATH.
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'facectl'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
    chmodSync(join(bin, 'facectl'), 0o755);
    const pasted = await promisify(execFile)('sh', ['-c', hint.replace('send them as a batch: ', '')], {
      cwd: dir,
      env: { ...env, PATH: `${bin}:${process.env.PATH}`, HOME: dir, NO_COLOR: '1' },
    });
    // --json came along: one result line per document.
    const lines = pasted.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { ok: boolean });
    expect(lines.map((line) => line.ok)).toEqual([true, true, true]);
    expect(
      stored(service, 'hint-')
        .map((d) => d.content)
        .sort(),
    ).toEqual(['document 1', 'document 2', 'document 3']);

    // With --api-key-stdin, the key's line goes first, as docs/usage.md writes it.
    writeFileSync(join(dir, 'more.json'), JSON.stringify([{ label: 'hint-4', content: 'document 4' }]));
    const keyed = await runCli(['docs', 'submit', '--file', 'more.json', '--alias', 'ada-hint', '--api-key-stdin'], {
      env: { ...env, FACECTL_BASE_URL: url },
      cwd: dir,
      stdin: `${service.key('pro')}\n`,
    });
    const command = /send them as a batch: (.*)\n/.exec(keyed.stderr)?.[1] as string;
    expect(command).toBe(
      `{ printf '%s\\n' "\${FACECTL_KEY:?set FACECTL_KEY to the API key}"; jq -c '.[]' more.json; } | ` +
        'facectl docs submit --format ndjson --alias ada-hint --api-key-stdin -',
    );
    // Pasted with the variable unset, the shell says so and no document line is sent as the key (a breaker's
    // `printenv KEY` printed nothing: the first document became the key, 401, and was lost).
    const shell = { ...env, PATH: `${bin}:${process.env.PATH}`, HOME: dir, FACECTL_BASE_URL: url };
    const before = requestCount(service);
    const unset = spawnSync('sh', ['-c', command], { cwd: dir, env: shell, encoding: 'utf8' });
    expect(unset.status).not.toBe(0);
    expect(unset.stderr).toContain('FACECTL_KEY: set FACECTL_KEY to the API key');
    expect(unset.stderr).not.toContain('document 4');
    expect(requestCount(service)).toBe(before);
    await promisify(execFile)('sh', ['-c', command], {
      cwd: dir,
      env: { ...shell, FACECTL_KEY: service.key('pro') },
    });
    expect(stored(service, 'hint-4').map((d) => d.content)).toEqual(['document 4']);
  });

  it('a JSON array file with --resume, --restart or --format ndjson --resume: the jq batch hint, which run as printed stores them', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'ns3.json'), JSON.stringify([1, 2].map((i) => ({ label: `arr-${i}`, content: `a${i}` }))));
    const env = { FACECTL_CONFIG_DIR: makeConfigDir(), FACECTL_API_KEY: service.key('pro') };
    const url = service.baseUrl;
    const command = `jq -c '.[]' ns3.json | facectl docs submit --format ndjson --alias ada-hint --base-url ${url} -`;
    const before = requestCount(service);
    // A breaker followed "pass --format ndjson if it is a batch" and got "line 1: ... found an array".
    for (const [flags, hint] of [
      [
        ['--resume'],
        `if it is NDJSON (a document a line), pass --format ndjson; if a JSON array, send its documents as a batch: ${command}`,
      ],
      [
        ['--restart'],
        `if it is NDJSON (a document a line), pass --format ndjson; if a JSON array, send its documents as a batch: ${command}`,
      ],
      [['--format', 'ndjson', '--resume'], `send them as a batch: ${command}`],
    ] as const) {
      const args = ['docs', 'submit', '--file', 'ns3.json', ...flags, '--alias', 'ada-hint', '--base-url', url];
      const result = await runCli(args, { env, cwd: dir });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr.trimEnd().split('\n').at(-1)).toBe(hint);
    }
    expect(requestCount(service)).toBe(before);
    if (spawnSync('jq', ['--version']).status !== 0) return; // no jq here: the text is checked above
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'facectl'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
    chmodSync(join(bin, 'facectl'), 0o755);
    await promisify(execFile)('sh', ['-c', command], { cwd: dir, env: { ...env, PATH: `${bin}:${process.env.PATH}` } });
    expect(
      stored(service, 'arr-')
        .map((d) => d.content)
        .sort(),
    ).toEqual(['a1', 'a2']);
  });

  // A pretty-printed JSON array (`jq . docs.json`) with --format ndjson is refused as one, with the jq line; after a
  // blank line (`echo; jq . docs.json`) it got the generic invalid-JSON errors: only the input's line 1 was checked.
  it('a pretty-printed JSON array after a blank line, --format ndjson: its first line opens a JSON array, with the jq hint; nothing sent', async () => {
    const pretty = `\n${JSON.stringify([{ label: 'a', content: 'one' }], null, 2)}\n`;
    const file = tempFile('docs.json', pretty);
    const message = 'line 2 opens a JSON array: documents in NDJSON are one JSON object a line';
    const fromFile = await refused([...DOC, '--format', 'ndjson', '--file', file], /line 2 opens/);
    expect(fromFile.stdout).toBe('');
    expect(fromFile.stderr).toBe(
      `error: ${file}: ${message}\nsend them as a batch: jq -c '.[]' ${file} | facectl docs submit --format ndjson --alias ada-x --label notes -\n`,
    );
    const piped = await refused([...DOC, '--format', 'ndjson', '-'], /line 2 opens/, pretty);
    expect(piped.stdout).toBe('');
    // Nothing was sent: no "Submitted 0 documents." before the error.
    expect(piped.stderr).toBe(
      `error: standard input: ${message}\n` +
        "send them as a batch: ... | jq -c '.[]' | facectl docs submit --format ndjson --alias ada-x --label notes -\n",
    );
    const asJson = await refused([...DOC, '--format', 'ndjson', '--json', '-'], /line 2 opens/, pretty);
    expect(JSON.parse(asJson.stderr).error).not.toHaveProperty('warnings');
  });

  it('case 1: unknown flag and missing argument -> usage on stderr, exit 2, nothing sent', async () => {
    const unknown = await refused(['keys', 'create', '--bogus'], /unknown option '--bogus'/);
    expect(unknown.stderr).toMatch(/usage: facectl keys create/);
    await refused(['import', 'face_1'], /missing required argument 'url'/);
    await refused(['faces', 'create', '--no-input'], /--name and --alias are required when not running interactively/);
  });

  // 0, -1 and 1000000 are whole numbers, as the seed types expires_in_days: sent, and the local
  // service's own 1-365 rule answers (test/e2e/seed-values.test.ts, test/unit/keys-create.test.ts).
  it('case 2: --expires-in-days 1.5, abc -> exit 2 naming the flag', async () => {
    for (const value of ['1.5', 'abc']) {
      await refused(['keys', 'create', `--expires-in-days=${value}`], /--expires-in-days: must be a whole number/);
    }
  });

  it('case 3: scopes not of the form v1:... -> exit 2', async () => {
    for (const value of ['foo', 'v2:*', 'v1:']) {
      await refused(['keys', 'create', '--scopes', value], /--scopes: ".*" is not a scope: use the form v1:\*/);
    }
  });

  it('case 4: --budget-usd -5, NaN, 1e309 -> exit 2 naming the flag', async () => {
    for (const value of ['-5', 'NaN', '1e309']) {
      await refused(['keys', 'create', `--budget-usd=${value}`], /--budget-usd: must be/);
    }
  });

  // The slug grammar is the local service's (the seed says only "a slug"): such aliases are sent and
  // refused by it with 422 (test/unit/faces.test.ts); the client refuses an empty one.
  it('case 5: an empty alias -> exit 2 naming the flag', async () => {
    for (const alias of ['', '  ']) {
      await refused(['faces', 'create', '--name', 'Ada', '--alias', alias], /--alias: an alias must not be empty/);
    }
  });

  it('case 6: --perspective, --interviewer-billing-source, --type outside their sets -> exit 2 listing the allowed values', async () => {
    await refused(
      [...DOC, '--perspective', 'second', '--content', 'x'],
      /--perspective: must be one of first-person, third-person/,
    );
    await refused(
      ['threads', 'create', '--alias', 'ada-x', '--label', 'l', '--interviewer-billing-source', 'cash'],
      /--interviewer-billing-source: must be one of oauth, compile, credits/,
    );
    // --type: the seed lists only `document` and leaves the others open, so any word is sent.
  });

  it('case 7: missing file, a directory, unreadable file (a path through a regular file: root reads any mode), invalid UTF-8, empty file -> exit 2 naming the path', async () => {
    const dir = tempDir();
    const missing = join(dir, 'none.txt');
    await refused([...DOC, '--file', missing], new RegExp(`cannot read ${missing}: no such file`));
    const sub = join(dir, 'sub');
    mkdirSync(sub);
    await refused([...DOC, '--file', sub], new RegExp(`cannot read ${sub}: it is a directory`));
    const plain = tempFile('plain.txt', 'text');
    await refused([...DOC, '--file', join(plain, 'child')], new RegExp(`cannot read ${plain}/child`));
    const latin1 = tempFile('latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    await refused([...DOC, '--file', latin1], new RegExp(`${latin1}: line 1: not valid UTF-8`));
    const empty = tempFile('empty.txt', '');
    await refused([...DOC, '--file', empty], new RegExp(`${empty} is empty`));
  });

  it('case 8: malformed JSON / NDJSON -> exit 2 naming file and line; nothing of an NDJSON file sent unless --continue-on-error', async () => {
    const doc = '{"alias":"ada-x","content":"c","label":"l"}';
    const truncated = tempFile('t.json', doc.slice(0, -1));
    await refused(
      ['docs', 'submit', '--file', truncated],
      new RegExp(`${truncated}: line 1, column \\d+: invalid JSON`),
    );
    const garbage = tempFile('g.json', `${doc} x`);
    await refused(['docs', 'submit', '--file', garbage], /line 1, column \d+: invalid JSON: unexpected text after/);
    const batch = tempFile('b.ndjson', `${doc}\n{"alias":"ada-x",\n${doc}\n`);
    const result = await refused(
      ['docs', 'submit', '--file', batch],
      new RegExp(`${batch}: line 2, column \\d+: invalid JSON`),
    );
    expect(result.stderr).toMatch(/nothing was sent.*--continue-on-error/);
    // With --continue-on-error the two valid lines are sent, the bad one reported, exit non-zero.
    const before = server.requests.length;
    const partial = await cliAt(server, ['docs', 'submit', '--file', batch, '--continue-on-error']);
    expect(partial.code).not.toBe(0);
    expect(server.requests.slice(before).filter((r) => r.method === 'POST')).toHaveLength(2);
  });

  it('case 9: a message list that is not an array of {role, content, from} -> exit 2 naming the index', async () => {
    const list = tempFile('m.json', '[{"role":"user","content":"hi","from":"a"},{"role":"user"}]');
    const result = await refused(
      ['threads', 'replace-messages', 'thr_1', '--file', list],
      /messages\[1\]\.content: required/,
    );
    expect(result.stderr).toMatch(/messages\[1\]\.from: required/);
    await refused(['threads', 'replace-messages', 'thr_1', '-'], /messages: expected an array/, '{"messages":5}');
  });

  it('case 10: stdin expected but it is a terminal -> clear error, never a hang', async () => {
    const result = await runIn(server, ['docs', 'submit', '--alias', 'ada-x', '--label', 'l', '-'], {
      stdinIsTTY: true,
      env: {},
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/standard input is a terminal/i);
  });

  it('case 11: an API key containing a newline or non-printable characters -> refused locally', async () => {
    for (const key of ['fcs_abcdefgh_x\nX-Injected: 1', 'fcs_abcdefgh_x\u0001']) {
      const before = server.requests.length;
      const result = await runCli(['faces', 'get', 'face_1'], {
        env: { FACECTL_BASE_URL: server.baseUrl, FACECTL_API_KEY: key },
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/contains whitespace, control or non-ASCII characters; refusing to send it/);
      expect(result.stderr).not.toContain('X-Injected');
      expect(server.requests.length).toBe(before);
    }
  });

  it('case 12: a document over the size limit is refused before sending; a 413 is explained', async () => {
    const big = tempFile('big.txt', Buffer.alloc(64 * 1024 * 1024 + 1, 0x61));
    await refused(
      [...DOC, '--file', big],
      new RegExp(`${big} is larger than 64 MiB, the service's request size limit`),
    );
    const before = server.requests.length;
    server.handle((_req, res) => {
      res.writeHead(413, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ detail: 'request body too large', code: 'payload_too_large' }));
    });
    try {
      const result = await cliAt(server, [...DOC, '--content', 'small']);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(/request body too large/);
      expect(result.stderr).toMatch(/send less content per request/);
      expect(server.requests.length).toBe(before + 1);
    } finally {
      server.handle((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    }
  });
});
