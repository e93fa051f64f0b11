import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { run } from '../../src/main.js';
import { call, startTestService, type TestService } from '../helpers/service.js';
import { createTestContext, type TestContextOptions } from '../helpers/test-context.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service.close();
});

async function cli(argv: string[], options: TestContextOptions = {}) {
  const tc = createTestContext({ baseUrl: service.baseUrl, apiKey: service.key('pro'), ...options });
  try {
    const code = await run(argv, tc.ctx);
    return { code, stdout: tc.stdout(), stderr: tc.stderr() };
  } finally {
    await tc.close();
  }
}

describe('facectl api', () => {
  it('GET a known route: the validated answer as JSON', async () => {
    const { code, stdout, stderr } = await cli(['api', 'GET', '/v1/auth/api-keys/current']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(JSON.parse(stdout)).toMatchObject({ plan: 'pro', key_prefix: service.key('pro').slice(0, 12) });
  });

  it('POST with a body from stdin creates the face once', async () => {
    const { code, stdout } = await cli(['api', 'post', '/v1/faces', '--input', '-'], {
      stdin: JSON.stringify({ name: 'Ada Lovelace', alias: 'api-ada' }),
    });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ alias: 'api-ada', object: 'face' });
    const stored = await call(service, 'getFace', { key: service.key('pro'), params: { face_id: 'api-ada' } });
    expect(stored.status).toBe(200);
  });

  it('an invalid body for a known route: exit 2 naming the field, nothing sent', async () => {
    const before = service.stats.requests;
    const { code, stderr } = await cli(['api', 'POST', '/v1/faces', '--input', '-'], {
      stdin: JSON.stringify({ name: 'Ada', alias: 42 }),
    });
    expect(code).toBe(ExitCode.usage);
    expect(stderr).toMatch(/invalid body for POST \/v1\/faces: alias: .*expected string/);
    expect(service.stats.requests).toBe(before);
  });

  it('malformed JSON input: exit 2 naming the source and line', async () => {
    const { code, stderr } = await cli(['api', 'POST', '/v1/faces', '--input', '-'], { stdin: '{"name": "Ada",\n' });
    expect(code).toBe(ExitCode.usage);
    expect(stderr).toMatch(/standard input: line \d+, column \d+: invalid JSON/);
  });

  it('a path outside the contract is sent with a warning; its 404 is exit 4', async () => {
    const { code, stderr } = await cli(['api', 'GET', '/v1/nothing-here']);
    expect(stderr).toContain(
      'warning: no route of the interface matches GET /v1/nothing-here; sending it without validation',
    );
    expect(code).toBe(ExitCode.notFound);
  });

  it('refuses a URL on another origin: the key goes only to the configured service', async () => {
    const before = service.stats.requests;
    const { code, stderr } = await cli(['api', 'GET', 'https://evil.example.com/v1/auth/api-keys/current']);
    expect(code).toBe(ExitCode.usage);
    expect(stderr).toContain('refusing to send the API key to https://evil.example.com');
    expect(service.stats.requests).toBe(before);
  });

  it('accepts a full URL on the configured origin', async () => {
    const { code } = await cli(['api', 'GET', `${service.baseUrl}/v1/auth/api-keys/current`]);
    expect(code).toBe(0);
  });

  it('an unsupported method or a body for a GET: exit 2', async () => {
    expect((await cli(['api', 'PUT', '/v1/faces'])).code).toBe(ExitCode.usage);
    const withBody = await cli(['api', 'GET', '/v1/faces/api-ada', '--input', '-'], { stdin: '{}' });
    expect(withBody.code).toBe(ExitCode.usage);
    expect(withBody.stderr).toContain('takes no request body');
  });
});
