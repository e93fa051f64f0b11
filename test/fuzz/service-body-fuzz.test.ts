import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { errorBody, type RouteName, routes } from '../../src/contract/index.js';
import { MAX_JSON_DEPTH } from '../../src/service/http-util.js';
import { Store } from '../../src/service/store.js';
import { useService } from '../helpers/service-suite.js';
import { call, createDocument, expectContract } from '../helpers/service.js';
import { makeTempDir } from '../helpers/temp.js';
import { Gen, mulberry32, type TreeShape } from './generators.js';

/**
 * Fuzz target for the JSON bodies of the local service (`facectl serve`): every route that takes a
 * body gets generated bodies (valid ones mutated; values of random depth, size and key names; bodies
 * nested around the depth limit and far past it; long strings and single-letter runs; broken JSON and
 * bytes that are not UTF-8). Invariants: no 5xx, every answer follows the contract (an error is
 * `{detail, code}`), and whatever was accepted saves and loads again (a final snapshot, then a start
 * on it). The run prints a histogram of statuses.
 *
 * Replay: FUZZ_SEED=<seed> FUZZ_CASES=<n> npx vitest run test/fuzz/service-body-fuzz.test.ts
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20261125);
const CASES = Number(process.env.FUZZ_CASES ?? 1500);

const KEY_NAMES = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '',
  ' ',
  '\u0000',
  '\u202e',
  'a.b',
  '$ref',
  'id',
  'user_id',
  'alias',
  'content',
  '😀',
  'k'.repeat(2_000),
];

interface Target {
  route: RouteName;
  params?: Record<string, string>;
  /** A valid body to mutate. */
  valid: (gen: Gen) => Record<string, unknown>;
}

const dataFile = join(makeTempDir('facectl-body-fuzz-'), 'state.json');
const svc = useService(
  {
    dataFile,
    fetchUrl: async (url) => ({ text: `imported from ${url}`, finalUrl: url, contentType: 'text/plain' }),
  },
  { faces: ['fuzz-face'] },
);
const targets: Target[] = [];

beforeAll(async () => {
  const key = svc.key('pro');
  const doc = await createDocument(svc, key, 'fuzz-face', 'a document to edit');
  const thread = expectContract(
    'createThread',
    await call(svc, 'createThread', {
      key,
      body: { alias: 'fuzz-face', label: 't' },
    }),
    201,
  );
  const message = (gen: Gen) => ({ role: gen.pick(['user', 'assistant']), content: gen.text(40), from: gen.text(8) });
  targets.push(
    {
      route: 'createFace',
      valid: (gen) => ({ name: `F ${gen.text(10)}`, alias: `f-${gen.int(0, 1e9)}`, basic_facts: { born: 1815 } }),
    },
    { route: 'createApiKey', valid: (gen) => ({ name: gen.text(20), expires_in_days: gen.int(1, 365) }) },
    {
      route: 'createDocument',
      valid: (gen) => ({ alias: 'fuzz-face', label: gen.text(20) || 'l', content: gen.text(200) || 'c' }),
    },
    {
      route: 'editDocument',
      params: { document_id: doc.document_id },
      valid: (gen) => ({ content: gen.text(100) || 'c', label: gen.text(10) || 'l' }),
    },
    {
      route: 'createThread',
      valid: (gen) => ({ alias: 'fuzz-face', label: gen.text(10) || 'l', interviewer_billing_source: null }),
    },
    {
      route: 'replaceThreadMessages',
      params: { thread_id: thread.thread_id },
      valid: (gen) => ({ messages: [message(gen)] }),
    },
    {
      route: 'importIntoFace',
      params: { face_id: 'fuzz-face' },
      valid: (gen) => ({ url: `https://example.org/${gen.int(0, 1e6)}`, type: 'document' }),
    },
  );
});

/** Random JSON values for bodies: keys from KEY_NAMES or random; empty, huge and look-alike strings. */
const BODY_VALUES: TreeShape = {
  leaves: [
    () => null,
    (gen) => gen.chance(0.5),
    (gen) => gen.pick([0, -0, 1, -1, 1.5, 2 ** 53 + 1, 1e308, -1e-308, 365, 366, 0.1]),
    (gen) => gen.text(30),
    (gen) => (gen.chance(0.2) ? 'a'.repeat(gen.int(1, 20_000)) : gen.text(5)),
    (gen) => gen.pick(['', ' ', 'null', '{}', '[]', '<|endoftext|>', '\u0000\u001b[2J']),
  ],
  items: 4,
  members: 4,
  key: (gen) => (gen.chance(0.5) ? gen.pick(KEY_NAMES) : gen.text(12)),
};

/** A random JSON value: up to `depth` levels of arrays and objects. */
function value(gen: Gen, depth: number): unknown {
  return gen.tree(BODY_VALUES, depth);
}

/** `inner` inside `levels` more levels of objects and arrays. */
function nest(inner: string, levels: number, gen: Gen): string {
  const array = gen.chance(0.5);
  return `${(array ? '[' : '{"k":').repeat(levels)}${inner}${(array ? ']' : '}').repeat(levels)}`;
}

/** One generated body: raw bytes to send, and what kind of mutation made it (for the report). */
function body(gen: Gen, target: Target): { raw: Buffer; kind: string } {
  const valid = target.valid(gen);
  const fields = Object.keys(valid);
  const json = (v: unknown) => Buffer.from(JSON.stringify(v), 'utf8');
  switch (gen.int(0, 9)) {
    case 0:
      return { raw: json(valid), kind: 'valid' };
    case 1: {
      // One field replaced by a random value.
      const field = gen.pick(fields);
      return { raw: json({ ...valid, [field]: value(gen, gen.int(0, 6)) }), kind: 'field' };
    }
    case 2: {
      // An extra key, often one with a meaning in JavaScript.
      const raw = JSON.stringify(valid).replace(
        /^\{/,
        `{${JSON.stringify(gen.pick(KEY_NAMES))}:${JSON.stringify(value(gen, 2))},`,
      );
      return { raw: Buffer.from(raw), kind: 'key-name' };
    }
    case 3: {
      // A field nested around the depth limit, or far past it.
      const levels = gen.pick([
        MAX_JSON_DEPTH - 3,
        MAX_JSON_DEPTH - 2,
        MAX_JSON_DEPTH - 1,
        MAX_JSON_DEPTH,
        500,
        6_000,
        50_000,
      ]);
      const field = gen.pick([...fields, 'basic_facts']);
      const raw = JSON.stringify({ ...valid, [field]: '@@' }).replace('"@@"', nest('1', levels, gen));
      return { raw: Buffer.from(raw), kind: 'depth' };
    }
    case 4: {
      // Large strings: a long text, a single-letter run, many small parts.
      const field = gen.pick(fields);
      const size = gen.pick([1_000, 70_000, 300_000]);
      const big = gen.chance(0.5) ? 'z'.repeat(size) : Array.from({ length: size / 10 }, () => gen.text(10)).join('');
      return { raw: json({ ...valid, [field]: big }), kind: 'size' };
    }
    case 5: {
      // Many keys or many elements.
      const many = gen.chance(0.5)
        ? Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, i]))
        : Array.from({ length: 20_000 }, (_, i) => i);
      return { raw: json({ ...valid, [gen.pick([...fields, 'basic_facts'])]: many }), kind: 'width' };
    }
    case 6: {
      // Broken JSON: cut short, a stray byte, duplicate keys, a top level that is not an object.
      const text = JSON.stringify(valid);
      const broken = gen.pick([
        text.slice(0, gen.int(0, text.length - 1)),
        `${text}x`,
        text.replace(/^\{/, `{${JSON.stringify(fields[0])}:1,`),
        gen.pick(['[]', 'null', '"x"', '1', 'true', '{}', ' ', '\ufeff{}']),
        gen.mutate(text),
      ]);
      return { raw: Buffer.from(broken, 'utf8'), kind: 'broken' };
    }
    case 7: {
      // Bytes that are not UTF-8 inside a string.
      const text = Buffer.from(JSON.stringify(valid), 'utf8');
      const at = Math.max(1, text.indexOf('"', 2) + 1);
      return {
        raw: Buffer.concat([text.subarray(0, at), Buffer.from([0xff, 0xc3, 0x28]), text.subarray(at)]),
        kind: 'utf8',
      };
    }
    case 8:
      // A whole random value as the body.
      return { raw: json(value(gen, gen.int(0, 8))), kind: 'random' };
    default: {
      // The body itself wrapped deep (past the limit, or just at it).
      const levels = gen.pick([MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, 1_000, 100_000]);
      return { raw: Buffer.from(nest(JSON.stringify(valid), levels, gen)), kind: 'deep-body' };
    }
  }
}

describe('service body fuzz', () => {
  it(`${CASES} generated JSON bodies: no 5xx, answers follow the contract, the state saves and loads (seed ${SEED})`, async () => {
    const gen = new Gen(mulberry32(SEED));
    const statuses = new Map<number, number>();
    const kinds = new Map<string, number>();
    const failures: string[] = [];
    const key = svc.key('pro');
    for (let n = 0; n < CASES; n++) {
      const target = gen.pick(targets);
      const { raw, kind } = body(gen, target);
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      const res = await call(svc, target.route, { key, params: target.params, rawBody: raw });
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const where = `case ${n} (${target.route}, ${kind}, ${raw.length} bytes)`;
      if (res.status >= 500) failures.push(`${where}: ${res.status} ${res.text.slice(0, 200)}`);
      const schema = res.status < 300 ? routes[target.route].response : errorBody;
      if (!schema.safeParse(res.body).success)
        failures.push(`${where}: ${res.status} outside the contract: ${res.text.slice(0, 200)}`);
    }
    const histogram = [...statuses.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([s, c]) => `${s}:${c}`)
      .join(' ');
    console.log(
      `service body fuzz: seed=${SEED} cases=${CASES} statuses ${histogram} kinds ${[...kinds.entries()].map(([k, c]) => `${k}:${c}`).join(' ')}`,
    );
    expect(failures).toEqual([]);
    expect(svc.logs.filter((line) => /could not|internal error/.test(line))).toEqual([]);

    // What was accepted saves (final snapshot) and loads again.
    await svc.close();
    expect(svc.logs.filter((line) => /could not/.test(line))).toEqual([]);
    const store = Store.open(dataFile);
    expect(store.get('faces', [...store.values('faces')][0]?.id ?? '')).toBeDefined();
    store.abandon();
  }, 600_000);
});
