import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FaultServer, json, type RecordedRequest, startFaultServer } from '../helpers/fault-server.js';
import { documentBody, NOW } from '../helpers/seed-bodies.js';
import { runInProcess } from '../helpers/unit-harness.js';

/**
 * Issue 22 item 5: a field of an answer that is null, missing or of another type, and that the command
 * does not need to do its job, never fails it. It is shown as absent (`—` in a table; under --json null
 * stays null, missing stays missing), and --debug says what deviated. A field the command needs (the new
 * key's secret, the ids it prints for reuse, the authorize URL, what oauth connect/disconnect decide by)
 * missing is exit 1 naming the route and the field (reliability case 30).
 */

let server: FaultServer;
beforeAll(async () => {
  server = await startFaultServer();
});
afterAll(() => server.close());

const FACE = {
  alias: 'ada',
  created: 1_773_576_000,
  owned_by: 'usr_1',
  uid: 'face_1',
  object: 'face',
  name: 'Ada',
  basic_facts: { born: 1815 },
  default_tools: ['search'],
  default_model: 'm1',
  formula: 'f',
  profile_token_count: 3,
  total_tokens_saved: 0,
  component_counts: { alpha: 1, beta: 0, delta: 0, epsilon: 0 },
  warnings: ['check the facts'],
};
const DOCUMENT = documentBody({
  alias: 'ada',
  type: 'document',
  prepare_status: 'pending',
  chunks_total: 2,
  chunks_completed: 1,
  current_counts: { alpha: 1 },
});
const THREAD = {
  thread_id: 'thr_1',
  label: 'Interview',
  alias: 'ada',
  source: 'submit',
  messages: [{ role: 'user', content: 'In London.', name: 'Ada' }],
  message_count: 1,
  messages_archived: 0,
  synced: false,
  token_count: 3,
  tokens_used: 0,
  tokens_limit: 100,
  created_at: NOW,
  updated_at: NOW,
  interviewer_billing_source: 'credits',
  prepare_status: 'ready',
  chunks_total: 1,
  chunks_completed: 1,
  current_counts: {},
};
const KEY_FIELDS = {
  id: 'key_1',
  name: 'ci',
  created_at: NOW,
  expires_at: NOW,
  key_prefix: 'fcs_abcdefgh',
  budget_usd: 5,
  spent_usd: 1,
  allowed_face_ids: ['face_1'],
  allowed_llm_models: ['m1'],
};
const NEW_KEY = { key: 'fcs_abcdefgh_secretsecretsecret', ...KEY_FIELDS };
const CURRENT_KEY = { ...KEY_FIELDS, scopes: ['v1:*'], plan: 'connect' };
const CONNECTED = { provider: 'example', connected: true, connected_at: NOW };

/** Answers by route, for the commands below; `answers` replaces the one of a route (by `METHOD path`). */
function serve(answers: Record<string, unknown>) {
  const standard: Record<string, unknown> = {
    'GET /v1/faces/ada': FACE,
    'POST /v1/faces': FACE,
    'POST /v1/faces/ada/import': DOCUMENT,
    'POST /v1/compile/documents': DOCUMENT,
    'GET /v1/compile/documents/doc_1': DOCUMENT,
    'POST /v1/compile/documents/doc_1/sync': DOCUMENT,
    'POST /v1/compile/threads': THREAD,
    'GET /v1/compile/threads/thr_1': THREAD,
    'POST /v1/compile/threads/thr_1/sync': THREAD,
    'PATCH /v1/compile/threads/thr_1/messages': THREAD,
    'POST /v1/auth/api-keys': NEW_KEY,
    'GET /v1/auth/api-keys/current': CURRENT_KEY,
    'GET /v1/oauth': [CONNECTED],
    'GET /v1/oauth/example/authorize': { authorize_url: 'http://127.0.0.1:1/consent' },
    'DELETE /v1/oauth/example': { detail: 'Disconnected from example' },
  };
  server.handle((req: RecordedRequest, res) => {
    const route = `${req.method} ${req.url.replace(/\?.*$/, '')}`;
    const answer = route in answers ? answers[route] : standard[route];
    if (answer === undefined) return json(res, 404, { detail: `no ${route}`, code: 'not_found' });
    json(res, req.method === 'POST' ? 201 : 200, answer);
  });
}

function cli(argv: string[], options: { stdin?: string; stdoutIsTTY?: boolean } = {}) {
  return runInProcess([...argv, '--no-input'], {
    baseUrl: server.baseUrl,
    apiKey: 'fcs_lenient',
    now: NOW,
    ...options,
  });
}

/** `value` of another type than the one `sample` has (a string where a number was, and so on). */
function otherType(sample: unknown): unknown {
  if (typeof sample === 'string') return 42;
  if (typeof sample === 'number') return 'many';
  if (typeof sample === 'boolean') return 'yes';
  if (Array.isArray(sample)) return 'a list';
  return 'an object';
}

/**
 * The answer with every field but `keep` deviating, in turn null, missing, or of another type; and
 * what --json must show of each (null stays null; missing and another type are absent, or the default
 * the interface gives the field).
 */
function deviating(full: Record<string, unknown>, keep: string[], defaults: Record<string, unknown> = {}) {
  const answer: Record<string, unknown> = {};
  const shown: Record<string, unknown> = {};
  Object.entries(full).forEach(([field, value], i) => {
    if (keep.includes(field)) {
      answer[field] = value;
      shown[field] = value;
    } else if (i % 3 === 0) {
      answer[field] = null;
      shown[field] = null;
    } else if (i % 3 === 1) {
      if (field in defaults) shown[field] = defaults[field];
    } else {
      answer[field] = otherType(value);
    }
  });
  return { answer, shown };
}

/** Two lines of NDJSON: a batch. */
const BATCH = ['a', 'b'].map((content) => JSON.stringify({ alias: 'ada', label: 'l', content })).join('\n');
const MESSAGES = JSON.stringify([{ role: 'user', content: 'In London.', from: 'Ada' }]);

/** Each command that reads an answer: its route, the full answer, what it needs, the defaults of its fields. */
const COMMANDS: {
  name: string;
  argv: string[];
  route: string;
  full: Record<string, unknown>;
  needs: string[];
  defaults?: Record<string, unknown>;
  stdin?: string;
}[] = [
  { name: 'faces get', argv: ['faces', 'get', 'ada'], route: 'GET /v1/faces/ada', full: FACE, needs: ['alias'] },
  {
    name: 'faces create',
    argv: ['faces', 'create', '--name', 'Ada', '--alias', 'ada'],
    route: 'POST /v1/faces',
    full: FACE,
    needs: ['alias'],
  },
  {
    name: 'import',
    argv: ['import', 'ada', 'https://example.com/a.txt'],
    route: 'POST /v1/faces/ada/import',
    full: DOCUMENT,
    needs: ['document_id'],
  },
  {
    name: 'docs get',
    argv: ['docs', 'get', 'doc_1'],
    route: 'GET /v1/compile/documents/doc_1',
    full: DOCUMENT,
    needs: [],
  },
  {
    name: 'docs sync',
    argv: ['docs', 'sync', 'doc_1'],
    route: 'POST /v1/compile/documents/doc_1/sync',
    full: DOCUMENT,
    needs: [],
  },
  {
    name: 'docs submit',
    argv: ['docs', 'submit', '--alias', 'ada', '--label', 'l', '--content', 'hi'],
    route: 'POST /v1/compile/documents',
    full: DOCUMENT,
    needs: ['document_id', 'token_count'],
  },
  {
    name: 'threads create',
    argv: ['threads', 'create', '--alias', 'ada', '--label', 'l'],
    route: 'POST /v1/compile/threads',
    full: THREAD,
    needs: ['thread_id'],
  },
  {
    name: 'threads get',
    argv: ['threads', 'get', 'thr_1'],
    route: 'GET /v1/compile/threads/thr_1',
    full: THREAD,
    needs: [],
  },
  {
    name: 'threads sync',
    argv: ['threads', 'sync', 'thr_1'],
    route: 'POST /v1/compile/threads/thr_1/sync',
    full: THREAD,
    needs: [],
  },
  {
    name: 'threads replace-messages',
    argv: ['threads', 'replace-messages', 'thr_1', '-'],
    route: 'PATCH /v1/compile/threads/thr_1/messages',
    full: THREAD,
    needs: [],
    stdin: MESSAGES,
  },
  { name: 'keys create', argv: ['keys', 'create'], route: 'POST /v1/auth/api-keys', full: NEW_KEY, needs: ['key'] },
  {
    name: 'api (a known route)',
    argv: ['api', '/v1/faces/ada'],
    route: 'GET /v1/faces/ada',
    full: FACE,
    needs: ['alias'],
  },
];
const DEFAULTS: Record<string, Record<string, unknown>> = {
  'GET /v1/faces/ada': { object: 'face' },
  'POST /v1/faces': { object: 'face' },
};
const documentDefaults = { type: 'document' };

describe('a field the command does not need: null, missing or of another type never fails it', () => {
  it.each(COMMANDS)(
    '$name: every other field deviating at once -> exit 0; --json null/absent as received',
    async (c) => {
      const defaults = DEFAULTS[c.route] ?? (c.full === DOCUMENT ? documentDefaults : {});
      const { answer, shown } = deviating(c.full, c.needs, defaults);
      serve({ [c.route]: answer });
      const asJson = await cli([...c.argv, '--json'], { ...(c.stdin ? { stdin: c.stdin } : {}) });
      expect(asJson.code, asJson.stderr).toBe(0);
      expect(JSON.parse(asJson.stdout)).toEqual(shown);
      for (const stdoutIsTTY of [true, false]) {
        const shownAs = await cli(c.argv, { stdoutIsTTY, ...(c.stdin ? { stdin: c.stdin } : {}) });
        expect(shownAs.code, shownAs.stderr).toBe(0);
        expect(shownAs.stderr).not.toContain('undefined');
        expect(shownAs.stdout).not.toMatch(c.argv[0] === 'api' ? /undefined|NaN/ : /undefined|\bnull\b|NaN/);
        for (const needed of c.needs) expect(shownAs.stdout).toContain(String(c.full[needed]));
      }
    },
  );

  it('docs submit of a batch: every field but document_id and token_count deviating -> exit 0, each line reported', async () => {
    serve({ 'POST /v1/compile/documents': deviating(DOCUMENT, ['document_id', 'token_count']).answer });
    const result = await cli(['docs', 'submit', '-', '--json'], { stdin: BATCH });
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { line: number });
    expect(lines.sort((a, b) => a.line - b.line)).toEqual(
      [1, 2].map((line) => ({ line, ok: true, document_id: 'doc_1', token_count: 1 })),
    );
  });

  it('auth status: the key described with fields left out, null or of another type -> exit 0', async () => {
    const { answer } = deviating(CURRENT_KEY, []);
    serve({ 'GET /v1/auth/api-keys/current': answer });
    const result = await cli(['auth', 'status'], { stdoutIsTTY: true });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toMatch(/undefined|NaN/);
    const asJson = await cli(['auth', 'status', '--json']);
    expect(asJson.code, asJson.stderr).toBe(0);
    expect(JSON.parse(asJson.stdout)).toMatchObject({ logged_in: true, key_id: null });
  });
});

describe('the connection list with connected_at: null (a provider never connected)', () => {
  const NEVER = { provider: 'example', connected: false, connected_at: null };

  it('oauth list: exit 0; `—` in the table, empty when piped, null under --json', async () => {
    serve({ 'GET /v1/oauth': [NEVER] });
    const table = await cli(['oauth', 'list'], { stdoutIsTTY: true });
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^example\s+false\s+—$/m);
    const piped = await cli(['oauth', 'list']);
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout).toBe('example\tfalse\t\n');
    const asJson = await cli(['oauth', 'list', '--json']);
    expect(JSON.parse(asJson.stdout)).toEqual([NEVER]);
  });

  it('--debug says what deviated: the route, the field, what was expected and what came', async () => {
    serve({ 'GET /v1/oauth': [NEVER] });
    const result = await cli(['oauth', 'list', '--debug']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(
      'GET /v1/oauth (listOAuthConnections): field [0].connected_at: expected a date-time string, came null',
    );
    const quiet = await cli(['oauth', 'list']);
    expect(quiet.stderr).toBe('');
  });

  it('oauth disconnect: the connected provider is disconnected (exit 0, DELETE sent)', async () => {
    serve({
      'GET /v1/oauth': [
        { ...CONNECTED, connected_at: null },
        { ...NEVER, provider: 'other' },
      ],
    });
    const result = await cli(['oauth', 'disconnect', 'example', '--yes']);
    expect(result.code, result.stderr).toBe(0);
    expect(server.requests.at(-1)).toMatchObject({ method: 'DELETE', url: '/v1/oauth/example' });
  });

  it('oauth connect: a provider connected already, its connected_at null -> exit 0', async () => {
    serve({ 'GET /v1/oauth': [{ ...CONNECTED, connected_at: null }] });
    const result = await cli(['oauth', 'connect', 'example', '--no-browser']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('example is already connected');
  });
});

describe('a field the command needs: missing is exit 1 naming the route and the field (case 30)', () => {
  const cases: [string, string[], string, unknown, string, string?][] = [
    ['keys create: key', ['keys', 'create'], 'POST /v1/auth/api-keys', KEY_FIELDS, 'key'],
    ['faces get: alias', ['faces', 'get', 'ada'], 'GET /v1/faces/ada', { ...FACE, alias: undefined }, 'alias'],
    [
      'faces create: alias',
      ['faces', 'create', '--name', 'Ada', '--alias', 'ada'],
      'POST /v1/faces',
      { ...FACE, alias: null },
      'alias',
    ],
    [
      'import: document_id',
      ['import', 'ada', 'https://example.com/a.txt'],
      'POST /v1/faces/ada/import',
      { ...DOCUMENT, document_id: 7 },
      'document_id',
    ],
    [
      'docs submit: document_id',
      ['docs', 'submit', '--alias', 'ada', '--label', 'l', '--content', 'hi'],
      'POST /v1/compile/documents',
      { ...DOCUMENT, document_id: undefined },
      'document_id',
    ],
    [
      'threads create: thread_id',
      ['threads', 'create', '--alias', 'ada', '--label', 'l'],
      'POST /v1/compile/threads',
      { ...THREAD, thread_id: undefined },
      'thread_id',
    ],
    [
      'oauth connect: authorize_url',
      ['oauth', 'connect', 'example', '--no-browser'],
      'GET /v1/oauth/example/authorize',
      {},
      'authorize_url',
      'GET /v1/oauth',
    ],
    [
      'oauth disconnect: connected',
      ['oauth', 'disconnect', 'example', '--yes'],
      'GET /v1/oauth',
      [{ provider: 'example', connected: null }],
      '[0].connected',
    ],
    [
      'oauth disconnect: provider',
      ['oauth', 'disconnect', 'example', '--yes'],
      'GET /v1/oauth',
      [{ connected: true }],
      '[0].provider',
    ],
  ];

  it.each(cases)('%s', async (_name, argv, route, answer, field, listFirst) => {
    serve({ [route]: answer, ...(listFirst ? { [listFirst]: [] } : {}) });
    const before = server.requests.length;
    const result = await cli(argv);
    expect(result.code, result.stderr).toBe(1);
    const method = route.split(' ')[0];
    expect(result.stderr).toMatch(
      new RegExp(`unexpected response from ${method} \\S+ \\(\\w+\\): field ${escape(field)}:`),
    );
    expect(result.stdout).toBe('');
    // Nothing was done after the answer that lacked it.
    expect(server.requests.slice(before).some((r) => r.method === 'DELETE')).toBe(false);
  });
});

describe('a batch reads only what it keeps of each answer', () => {
  it.each([
    ['missing', undefined],
    ['of another type', 'many'],
  ])('token_count %s: the line fails naming the route and the field, exit 1', async (_how, tokenCount) => {
    serve({ 'POST /v1/compile/documents': { ...DOCUMENT, token_count: tokenCount } });
    const result = await cli(['docs', 'submit', '-'], { stdin: BATCH });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/unexpected response from POST \S+ \(createDocument\): field token_count:/);
    expect(result.stdout).toBe('');
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
