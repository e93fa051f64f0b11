import { describe, expect, it } from 'vitest';
import { ApiError, createClient, ExitCode, RequestValidationError, routes } from '../../src/index.js';
import { startFaultServer } from '../helpers/fault-server.js';
import { useService } from '../helpers/service-suite.js';

const service = useService();

describe('createClient (the library face)', () => {
  it('has one typed method per route, on the same contract and HTTP layer', async () => {
    const client = createClient({ baseUrl: service.baseUrl, apiKey: service.key('pro'), env: {} });
    try {
      expect(Object.keys(routes).every((name) => typeof (client as Record<string, unknown>)[name] === 'function')).toBe(
        true,
      );
      const face = await client.createFace({ name: 'Ada Lovelace', alias: 'lib-ada' });
      expect(face.alias).toBe('lib-ada');
      const doc = await client.createDocument({
        alias: 'lib-ada',
        label: 'notes',
        content: 'Ada wrote the first program.',
      });
      expect(doc.token_count).toBeGreaterThan(0);
      const read = await client.getDocument({ document_id: doc.document_id });
      expect(read.document_id).toBe(doc.document_id);
      const synced = await client.syncDocument({ document_id: doc.document_id });
      expect(synced.synced).toBe(true);
      const fetched = await client.getFace({ face_id: 'lib-ada' });
      expect(fetched.uid).toBe(face.uid);
      const current = await client.getCurrentApiKey();
      expect(current.plan).toBe('pro');
    } finally {
      await client.close();
    }
  });

  it('throws the CLI error classes: validation before sending, API errors with status and code', async () => {
    const client = createClient({ baseUrl: service.baseUrl, apiKey: service.key('free'), env: {} });
    try {
      // A type the seed states (alias is a string); the slug grammar is facectl serve's own to check.
      await expect(client.createFace({ name: 'x', alias: 42 as unknown as string })).rejects.toBeInstanceOf(
        RequestValidationError,
      );
      const error = await client.listOAuthConnections().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ status: 403, code: 'plan_required', exitCode: ExitCode.refused });
    } finally {
      await client.close();
    }
  });

  it('refuses an id holding a lone surrogate as invalid input (exit 2), before anything is sent', async () => {
    const server = await startFaultServer();
    const client = createClient({ baseUrl: server.baseUrl, apiKey: service.key('pro'), env: {} });
    try {
      for (const call of [
        () => client.getFace({ face_id: 'ada\ud800' }),
        () => client.getDocument({ document_id: '\udc00doc' }),
        () => client.syncThread({ thread_id: 'thr_\ud83d' }),
        () => client.disconnectOAuth({ provider: 'ex\udfffample' }),
      ]) {
        const error = await call().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(RequestValidationError);
        expect(error).toMatchObject({ exitCode: ExitCode.usage });
        expect((error as RequestValidationError).issues[0]?.message).toMatch(/lone surrogate/);
      }
      // A well-formed astral character (a surrogate pair) is fine: it is sent, percent-encoded.
      await client.getFace({ face_id: 'ada-\u{1F600}' }).catch(() => undefined);
      expect(server.requests.map((r) => r.url)).toEqual(['/v1/faces/ada-%F0%9F%98%80']);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("refuses '.' and '..' as a path parameter of any route (exit 2), before anything is sent; '%2e' is sent encoded", async () => {
    const server = await startFaultServer();
    const client = createClient({ baseUrl: server.baseUrl, apiKey: service.key('pro'), env: {} });
    try {
      for (const [call, name, value] of [
        [() => client.getFace({ face_id: '..' }), 'face_id', '..'],
        [() => client.getDocument({ document_id: '.' }), 'document_id', '.'],
        [() => client.replaceThreadMessages({ thread_id: '..' }, { messages: [] }), 'thread_id', '..'],
        [() => client.authorizeOAuth({ provider: '.' }), 'provider', '.'],
      ] as const) {
        const error = await call().catch((e: unknown) => e);
        expect(error).toMatchObject({
          exitCode: ExitCode.usage,
          message: `<${name}>: '${value}' cannot be sent as a path segment`,
        });
      }
      expect(server.requests).toEqual([]);
      // Any other id, one that looks like an encoded dot too, is sent percent-encoded: it stays one segment.
      await client.getFace({ face_id: '%2e%2e' }).catch(() => undefined);
      expect(server.requests.map((r) => r.url)).toEqual(['/v1/faces/%252e%252e']);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
