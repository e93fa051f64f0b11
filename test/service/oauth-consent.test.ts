import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { parseServeOptions } from '../../src/commands/serve-run.js';
import { UsageError } from '../../src/errors.js';
import { runCli } from '../helpers/run-cli.js';
import { ensureBuilt, type ServeProcess, startServeProcess } from '../helpers/serve-process.js';
import { call, expectContract, request, startTestService, type TestService } from '../helpers/service.js';

/**
 * `serve --consent approve|deny` (issue 22, item 9): the consent step is answered by serve itself, so
 * scripts and CI run `facectl oauth connect --no-browser` to its end with no browser at all.
 */

beforeAll(() => ensureBuilt(), 120_000);

let serve: ServeProcess | undefined;
let svc: TestService | undefined;
afterEach(async () => {
  await serve?.stop();
  await svc?.close();
  serve = undefined;
  svc = undefined;
});

const connected = async (service: { baseUrl: string }, key: string) =>
  expectContract('listOAuthConnections', await call(service, 'listOAuthConnections', { key }), 200)[0];

describe('facectl oauth connect --no-browser against serve --consent', () => {
  test('approve: the command connects and exits 0, with no browser', async () => {
    serve = await startServeProcess(['--consent', 'approve']);
    const result = await runCli(['oauth', 'connect', 'example', '--no-browser', '--timeout', '20'], {
      env: serve.env('connect'),
    });
    expect(result.code, result.stderr).toBe(0);
    // Piped, the command prints the connection as field<TAB>value lines.
    expect(result.stdout).toMatch(/^provider\texample\nconnected\ttrue\nconnected_at\t\d{4}-/);
    expect(await connected(serve, serve.key('connect'))).toMatchObject({ provider: 'example', connected: true });
  });

  test('deny: nothing is connected; the command waits out its timeout (exit 8), saying no approval came', async () => {
    serve = await startServeProcess(['--consent', 'deny']);
    const result = await runCli(['oauth', 'connect', 'example', '--no-browser', '--timeout', '2'], {
      env: serve.env('connect'),
    });
    expect(result.code).toBe(8);
    expect(result.stderr).toContain('was not connected within 2 s');
    expect(await connected(serve, serve.key('connect'))).toMatchObject({ connected: false });
  });

  test('page (the default): nothing happens until a person decides on the consent page', async () => {
    serve = await startServeProcess([]);
    const key = serve.key('connect');
    const res = await call(serve, 'authorizeOAuth', { key, params: { provider: 'example' } });
    const page = new URL(expectContract('authorizeOAuth', res, 200).authorize_url);
    expect(await connected(serve, key)).toMatchObject({ connected: false });
    const shown = await request(serve.baseUrl, 'GET', `${page.pathname}${page.search}`);
    expect(shown.text).toContain('Approve');
  });
});

test('approve: the authorize URL, opened afterwards, says the request was decided already', async () => {
  svc = await startTestService({ consent: 'approve' });
  const key = svc.key('connect');
  const res = await call(svc, 'authorizeOAuth', { key, params: { provider: 'example' } });
  const page = new URL(expectContract('authorizeOAuth', res, 200).authorize_url);
  expect(await connected(svc, key)).toMatchObject({ connected: true });
  expect(svc.stats.tokenExchanges).toBe(1);
  const opened = await request(svc.baseUrl, 'GET', `${page.pathname}${page.search}`);
  expect(opened.status).toBe(400);
  expect(opened.text).toContain('already decided');
});

test('--consent takes page, approve or deny; anything else is a usage error naming the flag', () => {
  const ctx = { globals: { json: false } } as Parameters<typeof parseServeOptions>[0];
  expect(parseServeOptions(ctx, { consent: 'approve' }).consent).toBe('approve');
  expect(parseServeOptions(ctx, {}).consent).toBe('page');
  expect(() => parseServeOptions(ctx, { consent: 'yes' })).toThrow(UsageError);
  expect(() => parseServeOptions(ctx, { consent: 'yes' })).toThrow(/--consent.*page, approve, deny/);
});
