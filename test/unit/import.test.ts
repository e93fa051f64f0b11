import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runImport } from '../../src/commands/import.js';
import { contextFor, requestCount, runCommand } from '../helpers/command-harness.js';
import { call, createFace, expectContract, startTestService, type TestService } from '../helpers/service.js';

let service: TestService;
let strict: TestService;
let pages: Server;
let pagesUrl: string;
const TEXT =
  'Ada: The Analytical Engine weaves algebraic patterns.\nCharles: Just as the Jacquard loom weaves flowers.\n';

beforeAll(async () => {
  pages = createServer((req, res) => {
    const status = { '/missing.txt': 404, '/broken.txt': 503 }[req.url ?? ''] ?? 200;
    res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end(req.url === '/interview.txt' ? TEXT : 'other');
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  pagesUrl = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  service = await startTestService({ allowPrivateUrls: true });
  strict = await startTestService();
  await createFace(service, service.key('pro'), 'ada-lovelace');
  await createFace(strict, strict.key('pro'), 'ada-lovelace');
});
afterAll(async () => {
  await service.close();
  await strict.close();
  await new Promise((resolve) => pages.close(resolve));
});

describe('import', () => {
  it('run() imports a transcript; the service stored it with its source, type and speaker', async () => {
    const tc = contextFor(service);
    const document = await runImport(tc.ctx, {
      faceId: 'ada-lovelace',
      url: `${pagesUrl}/interview.txt`,
      type: 'transcript',
      perspective: 'first-person',
      faceSpeaker: 'Ada',
    });
    await tc.close();
    expect(tc.stdout()).toContain(`document_id\t${document.document_id}\n`);
    expect(tc.stdout()).toContain(`source\t${pagesUrl}/interview.txt\n`);
    expect(tc.stderr()).toContain(`token_count ${document.token_count} is a preview: nothing is charged until sync`);
    const stored = expectContract(
      'getDocument',
      await call(service, 'getDocument', { key: service.key('pro'), params: { document_id: document.document_id } }),
      200,
    );
    expect(stored).toMatchObject({
      content: TEXT,
      type: 'transcript',
      source: `${pagesUrl}/interview.txt`,
      synced: false,
    });
    expect(stored.token_count).toBeGreaterThan(10);
  });

  it('script form prints the service object under --json', async () => {
    const result = await runCommand(service, [
      'import',
      'ada-lovelace',
      `${pagesUrl}/interview.txt`,
      '--json',
      '--no-input',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const printed = JSON.parse(result.stdout);
    expect(printed.type).toBe('document');
    expect(printed.content).toBe(TEXT);
    // Every stderr line is JSON under --json: the token-count preview is a notice.
    expect(
      result.stderr
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as unknown),
    ).toEqual([{ notice: expect.stringContaining(`token_count ${printed.token_count} is a preview`) as string }]);
  });

  it('--type pdf (a type the seed leaves open) is sent; the local service refuses it with 422 listing its types', async () => {
    const before = requestCount(service);
    const result = await runCommand(service, ['import', 'ada-lovelace', `${pagesUrl}/x`, '--type', 'pdf']);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain('status: 422 validation_error');
    expect(result.stderr).toMatch(/- type: .*"document".*"transcript"/);
    expect(requestCount(service)).toBe(before + 1);
  });

  it.each([
    [['--type', ''], '--type: must not be empty'],
    [['--perspective', 'second-person'], '--perspective: must be one of first-person, third-person'],
  ])('%j outside the allowed set is exit 2 listing the values (case 6), nothing sent', async (flags, message) => {
    const before = requestCount(service);
    const result = await runCommand(service, ['import', 'ada-lovelace', `${pagesUrl}/x`, ...flags]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`error: ${message}`);
    expect(requestCount(service)).toBe(before);
  });

  it.each([
    ['not a url', '<url>: "not a url" is not a URL'],
    ['file:///etc/passwd', '<url>: only http:// and https:// URLs can be imported, not file:'],
  ])('url %j is refused locally', async (url, message) => {
    const before = requestCount(service);
    const result = await runCommand(service, ['import', 'ada-lovelace', url]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`error: ${message}`);
    expect(requestCount(service)).toBe(before);
  });

  it('a private address refused by the service (422 url_not_allowed) is exit 2 with its detail', async () => {
    const result = await runCommand(strict, ['import', 'ada-lovelace', `${pagesUrl}/interview.txt`]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('url_not_allowed');
    expect(result.stderr).not.toContain('fix the values');
    expect(result.stderr.trimEnd().split('\n').at(-1)).toBe(
      'give a public URL: the service does not fetch private, loopback or otherwise internal addresses ' +
        '(`facectl serve --allow-private-urls` fetches loopback ones, for tests)',
    );
    expect(result.stdout).toBe('');
  });

  /** A loopback port nothing listens on (a server started and closed again). */
  const closedPort = async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    return port;
  };

  it.each([
    [
      '404',
      () => `${pagesUrl}/missing.txt`,
      (url: string) => `${url} answered HTTP 404`,
      'check the URL: the server there answered HTTP 404 (no such page there)',
    ],
    [
      '503',
      () => `${pagesUrl}/broken.txt`,
      (url: string) => `${url} answered HTTP 503`,
      'check the URL: the server there answered HTTP 503 (a problem on that server: try again later)',
    ],
    [
      'connection refused',
      async () => `http://127.0.0.1:${await closedPort()}/notes.txt`,
      (url: string) => `cannot connect to ${new URL(url).host}: ECONNREFUSED`,
      "check the URL's host name and port, and that the site is up and reachable over the network from the " +
        'service (the service fetches the URL, not this machine)',
    ],
  ])(
    'the fetch fails (%s): exit 1 (a failure a script may retry, not a usage error), the hint is about the URL, not "the values listed above"; nothing stored',
    async (_what, urlOf, detailOf, hint) => {
      const url = await urlOf();
      const documents = service.store.maps.documents.size;
      const result = await runCommand(service, ['import', 'ada-lovelace', url]);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(
        `error: the service could not import the URL: ${detailOf(url)}\n  status: 422 fetch_failed\n${hint}\n`,
      );
      expect(service.store.maps.documents.size).toBe(documents);

      const json = await runCommand(service, ['import', 'ada-lovelace', url, '--json']);
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stderr)).toEqual({
        error: {
          code: 'fetch_failed',
          status: 422,
          message: `the service could not import the URL: ${detailOf(url)}`,
          detail: detailOf(url),
          hint,
        },
      });
    },
  );

  it('an unknown face is exit 4', async () => {
    const result = await runCommand(service, ['import', 'no-such-face', `${pagesUrl}/interview.txt`]);
    expect(result.code).toBe(4);
  });
});
