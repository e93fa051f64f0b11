import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run } from '../../src/main.js';
import { runCommand } from '../helpers/command-harness.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { createTestContext } from '../helpers/test-context.js';

// Issue 12 items 1 and 2: under --json stderr is exactly one JSON document; hints follow the resource.
let service: TestService;
beforeEach(async () => {
  service = await startTestService();
});
afterEach(async () => {
  await service.close();
});

/** stderr parsed as exactly one JSON document (JSON.parse refuses anything before or after it). */
function onlyJson(stderr: string): { error: Record<string, unknown> } {
  expect(stderr.endsWith('\n')).toBe(true);
  expect(stderr.trimEnd().split('\n')).toHaveLength(1);
  return JSON.parse(stderr) as { error: Record<string, unknown> };
}

describe('--json errors: one JSON document on stderr and nothing else', () => {
  it('faces get nope --json: stdout empty, stderr is {"error": ...} with status, code and hint', async () => {
    const result = await runCommand(service, ['faces', 'get', 'nope', '--json']);
    expect(result.code).toBe(4);
    expect(result.stdout).toBe('');
    const { error } = onlyJson(result.stderr);
    expect(error).toMatchObject({ status: 404, code: 'face_not_found', hint: expect.stringContaining('uid or alias') });
  });

  it('a usage error from commander under --json: no `error:` or usage line before the JSON', async () => {
    const tc = createTestContext();
    expect(await run(['faces', 'get', '--json', '--bogus'], tc.ctx)).toBe(2);
    const { error } = onlyJson(tc.stderr());
    expect(error).toEqual({ code: 'usage', message: "unknown option '--bogus'" });
  });

  it('a warning said before the failure is carried inside the JSON error, not printed before it', async () => {
    // A path no route matches: `facectl api` warns that it sends it unvalidated, then the service says 404.
    const result = await runCommand(service, ['api', 'GET', '/v1/nothing', '--json']);
    expect(result.code).toBe(4);
    const { error } = onlyJson(result.stderr);
    expect(error.status).toBe(404);
    expect(error.warnings).toEqual([expect.stringContaining('no route of the interface matches GET /v1/nothing')]);
  });

  it('--debug --json: the trace is JSON lines too ({"debug"}, the key redacted), then the one error document', async () => {
    const result = await runCommand(service, ['faces', 'get', 'nope', '--json', '--debug']);
    expect(result.code).toBe(4);
    expect(result.stdout).toBe('');
    const lines = result.stderr
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.at(-1)).toMatchObject({ error: { status: 404, code: 'face_not_found' } });
    const trace = lines.slice(0, -1);
    expect(trace.length).toBeGreaterThan(1);
    for (const line of trace) expect(Object.keys(line)).toEqual(['debug']);
    expect(trace).toContainEqual({ debug: '> authorization: Bearer [redacted]' });
    expect(result.stderr).not.toContain(service.key('pro'));
  });

  it('an unexpected failure under --json is one JSON document too', async () => {
    const tc = createTestContext({ globals: { json: true } });
    tc.ctx.out.warn('held');
    const { reportError } = await import('../../src/main.js');
    reportError(tc.ctx, new TypeError('boom'));
    const { error } = onlyJson(tc.stderr());
    expect(error).toMatchObject({ code: 'internal_error', message: 'boom', warnings: ['warning: held'] });
  });

  it('without --json the human form: error line, status, hint last; held nothing', async () => {
    const result = await runCommand(service, ['faces', 'get', 'nope']);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe('error: no face nope');
    expect(lines.at(-1)).toContain('uid or alias');
    expect(result.stderr).not.toContain('{"error"');
  });

  it('a successful --json command still prints its messages (after the work), each a JSON line', async () => {
    const tc = createTestContext({ globals: { json: true } });
    tc.ctx.out.info('said');
    tc.ctx.out.warn('careful\u001b');
    expect(tc.stderr()).toBe('');
    tc.ctx.out.flush?.();
    expect(tc.stderr()).toBe('{"notice":"said"}\n{"warning":"careful\\u001b"}\n');
  });
});

describe('404 hints come from the resource and the code', () => {
  const cases: [string, string[], RegExp][] = [
    ['a face', ['faces', 'get', 'nope'], /faces are found by uid or alias/],
    ['a document', ['docs', 'get', 'doc_nope'], /document id \(doc_/],
    ['a thread', ['threads', 'get', 'thr_nope'], /thread id \(thr_/],
    ['a thread to replace', ['threads', 'replace-messages', 'thr_nope', '-'], /thread id \(thr_/],
    ['a connection', ['oauth', 'disconnect', 'example', '--yes'], /not connected/],
    ['an endpoint', ['api', 'GET', '/v1/nothing'], /no endpoint GET \/v1\/nothing.*facectl openapi/],
  ];
  it.each(cases)('%s', async (_what, argv, hint) => {
    const stdin = JSON.stringify([{ role: 'user', content: 'Dear Babbage', from: 'Ada' }]);
    const result = await runCommand(service, [...argv, '--json'], { plan: 'connect', stdin });
    expect(result.code).toBe(4);
    const { error } = onlyJson(result.stderr);
    expect(error.hint).toMatch(hint);
    if (!argv.includes('faces')) expect(error.hint).not.toMatch(/uid or alias/);
  });
});
