import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FaultServer, json, startFaultServer } from '../helpers/fault-server.js';
import { documentBody, NOW } from '../helpers/seed-bodies.js';
import { runInProcess } from '../helpers/unit-harness.js';

/**
 * What a real service may legitimately answer where the seed is silent or loose, read by the CLI: a
 * thread answer with any of its fields missing (which are always present is "not shown"), a face's
 * `created` in seconds or milliseconds (its unit is "not shown"), fields beyond the seed's, and
 * `warnings` on a face, which the user sees.
 */

let server: FaultServer;
beforeAll(async () => {
  server = await startFaultServer();
});
afterAll(() => server.close());

/** Runs the command line against the stand-in server, which answers every request with `answer`. */
function cli(argv: string[], answer: unknown, stdin?: string) {
  server.handle((_req, res) => json(res, 200, answer));
  return runInProcess(argv, {
    baseUrl: server.baseUrl,
    apiKey: 'fcs_lenient',
    ...(stdin === undefined ? {} : { stdin }),
  });
}

const FULL_THREAD = {
  thread_id: 'thr_1',
  label: 'Interview',
  alias: 'ada-lovelace',
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
  prepare_status: 'pending',
  chunks_total: 0,
  chunks_completed: 0,
  current_counts: {},
};
const MESSAGES = JSON.stringify([{ role: 'user', content: 'In London.', from: 'Ada' }]);
const THREAD_COMMANDS: [string, string[], string?][] = [
  ['threads get', ['threads', 'get', 'thr_1']],
  ['threads replace-messages', ['threads', 'replace-messages', 'thr_1', '-'], MESSAGES],
  ['threads sync', ['threads', 'sync', 'thr_1']],
];

describe('a thread answer with fields missing', () => {
  it.each(THREAD_COMMANDS)('%s reads an empty thread object: exit 0, printed as received', async (_n, argv, stdin) => {
    const result = await cli([...argv, '--json', '--no-input'], {}, stdin);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({});
  });

  it('threads create needs the thread_id it prints for reuse: without it, exit 1 naming the route and field', async () => {
    const argv = ['threads', 'create', '--alias', 'ada-lovelace', '--label', 'Interview', '--no-input'];
    const result = await cli(argv, {});
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('POST /v1/compile/threads (createThread): field thread_id');
    expect((await cli(argv, { thread_id: 'thr_9' })).code).toBe(0);
  });

  it.each(Object.keys(FULL_THREAD))('threads get reads a thread without %s (table and --json)', async (field) => {
    const answer: Record<string, unknown> = { ...FULL_THREAD };
    delete answer[field];
    const asJson = await cli(['threads', 'get', 'thr_1', '--json', '--no-input'], answer);
    expect(asJson.code, asJson.stderr).toBe(0);
    expect(JSON.parse(asJson.stdout)).toEqual(answer);
    const table = await cli(['threads', 'get', 'thr_1', '--no-input'], answer);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain('Interview'.slice(0, field === 'label' ? 0 : 9));
  });
});

const FACE = { alias: 'ada-lovelace', owned_by: 'user_1', name: 'Ada', uid: 'face_1' };

describe("a face's created in seconds or milliseconds", () => {
  it.each([
    ['seconds', 1_773_576_000],
    ['milliseconds', 1_773_576_000_000],
  ])('created in %s is shown as the same date', async (_unit, created) => {
    const result = await cli(['faces', 'get', 'ada-lovelace', '--no-input'], { ...FACE, created });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('2026-03-15T12:00:00.000Z');
    const asJson = await cli(['faces', 'get', 'ada-lovelace', '--json', '--no-input'], { ...FACE, created });
    expect(JSON.parse(asJson.stdout).created).toBe(created);
  });
});

describe('fields beyond the seed', () => {
  it('a document with extra fields: read, and --json prints them unchanged', async () => {
    const extra = { type: 'document', language: 'en', review: { state: 'queued', reviewers: ['a'] } };
    const answer = documentBody({ alias: 'ada-lovelace', label: 'notes', ...extra });
    const result = await cli(['docs', 'get', 'doc_1', '--json', '--no-input'], answer);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(answer);
  });

  it('a face with extra fields and an unknown component count: read and printed', async () => {
    const answer = {
      ...FACE,
      created: 1,
      rank: 3,
      component_counts: { alpha: 1, beta: 0, delta: 0, epsilon: 0, zeta: 9 },
    };
    const result = await cli(['faces', 'get', 'ada-lovelace', '--json', '--no-input'], answer);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ rank: 3, component_counts: { zeta: 9 } });
  });
});

describe('warnings on a face', () => {
  it.each([
    ['faces get', ['faces', 'get', 'ada-lovelace']],
    ['faces create', ['faces', 'create', '--name', 'Ada', '--alias', 'ada-lovelace']],
  ])('%s shows each warning to the user on stderr, and in the record', async (_n, argv) => {
    const warnings = ['basic_facts.born looks like a placeholder', 'no default model'];
    const answer = { ...FACE, created: 1_773_576_000, warnings };
    const result = await cli([...argv, '--no-input'], answer);
    expect(result.code, result.stderr).toBe(0);
    for (const warning of warnings) expect(result.stderr).toContain(`warning: the service says: ${warning}`);
    expect(result.stdout).toContain('no default model');
    const asJson = await cli([...argv, '--json', '--no-input'], answer);
    expect(JSON.parse(asJson.stdout).warnings).toEqual(warnings);
  });

  it('no warning line for an empty or null list', async () => {
    for (const warnings of [[], null]) {
      const result = await cli(['faces', 'get', 'ada-lovelace', '--no-input'], { ...FACE, created: 1, warnings });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).not.toContain('warning:');
    }
  });
});
