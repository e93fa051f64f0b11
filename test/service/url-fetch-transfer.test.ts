// What the import fetcher does with an allowed URL: against a real loopback server (allowPrivate), it
// returns the text, pins the checked address, re-checks each redirect hop, and fails with fetch_failed
// on bad statuses, non-text types, too many redirects, too large bodies and slow servers. The connect
// step is a spy that opens sockets to loopback only.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LookupAddress } from 'node:dns';
import { type ConnectStep, connectPinned } from '../../src/service/url-fetch/connect.js';
import { type FetchImportOptions, fetchImportUrl } from '../../src/service/url-fetch/index.js';
import { spyConnect, urlFetchError } from '../helpers/url-fetch-spy.js';

/** The loopback server's fixed pages: path -> status, headers, body. */
const PAGES: Record<string, [number, http.OutgoingHttpHeaders, string | Buffer]> = {
  '/text': [200, { 'content-type': 'text/plain; charset=utf-8' }, 'héllo ✓'],
  '/markdown': [200, { 'content-type': 'text/markdown' }, '# Title\n'],
  '/json': [200, { 'content-type': 'Application/JSON' }, '{"a":1}'],
  // Latin-1 bytes: decoded with the charset the Content-Type names.
  '/latin1': [200, { 'content-type': 'text/plain; charset=iso-8859-1' }, Buffer.from('café', 'latin1')],
  '/binary': [200, { 'content-type': 'application/octet-stream' }, Buffer.from([0, 1, 2])],
  '/image': [200, { 'content-type': 'image/png' }, 'png'],
  '/untyped': [200, {}, 'no type'],
  '/gzip': [200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' }, 'x'],
  '/missing': [404, { 'content-type': 'text/plain' }, 'not here'],
  '/exactly-1000': [200, { 'content-type': 'text/plain' }, 'a'.repeat(1000)],
  '/big': [200, { 'content-type': 'text/plain' }, 'a'.repeat(2000)],
};

let server: http.Server;
let base = '';
let port = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const chain = /^\/chain\/(\d+)$/.exec(path);
    if (chain) {
      const left = Number(chain[1]);
      if (left === 0) res.writeHead(200, { 'content-type': 'text/plain' }).end('end of chain');
      else res.writeHead(302, { location: `/chain/${left - 1}` }).end();
      return;
    }
    const page = PAGES[path];
    if (page) {
      res.writeHead(page[0], page[1]).end(page[2]);
      return;
    }
    switch (path) {
      case '/host':
        res.writeHead(200, { 'content-type': 'text/plain' }).end(req.headers.host);
        return;
      case '/big-chunked': {
        // No Content-Length: the cap has to be enforced while the body streams.
        res.writeHead(200, { 'content-type': 'text/plain' });
        for (let i = 0; i < 10; i++) res.write('b'.repeat(200));
        res.end();
        return;
      }
      case '/slow-headers':
        return; // never answers
      case '/slow-body':
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('first part'); // and never ends
        return;
      default:
        res.writeHead(500).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(() => {
  server.closeAllConnections();
  server.close();
});

function options(extra: Partial<FetchImportOptions> = {}): FetchImportOptions & { addresses: string[] } {
  const spy = spyConnect();
  return { allowPrivate: true, timeoutMs: 5000, connect: spy.connect, addresses: spy.addresses, ...extra };
}

describe('fetching an allowed URL', () => {
  it('returns the text of a loopback server with allowPrivate', async () => {
    const opts = options();
    const result = await fetchImportUrl(`${base}/text`, opts);
    expect(result).toEqual({ text: 'héllo ✓', finalUrl: `${base}/text`, contentType: 'text/plain' });
    expect(opts.addresses).toEqual(['127.0.0.1']);
  });

  it('accepts the IPv4-mapped loopback form with allowPrivate', async () => {
    const result = await fetchImportUrl(`http://[::ffff:127.0.0.1]:${port}/text`, options());
    expect(result.text).toBe('héllo ✓');
  });

  it.each([
    ['/markdown', 'text/markdown', '# Title\n'],
    ['/json', 'application/json', '{"a":1}'],
    ['/latin1', 'text/plain', 'café'],
  ])('accepts %s as %s', async (path, contentType, text) => {
    expect(await fetchImportUrl(`${base}${path}`, options())).toMatchObject({ contentType, text });
  });

  it('connects to the checked address, not to what DNS says later (rebinding)', async () => {
    const lookups: string[] = [];
    // The first answer is loopback; any later one would be private. A `.test` name has no real DNS,
    // so the fetch can only succeed if the connection used the checked address.
    const lookup = async (hostname: string): Promise<LookupAddress[]> => {
      lookups.push(hostname);
      return [{ address: lookups.length === 1 ? '127.0.0.1' : '10.0.0.1', family: 4 }];
    };
    const opts = options({ lookup });
    const result = await fetchImportUrl(`http://rebind.test:${port}/host`, opts);
    expect(result.text).toBe(`rebind.test:${port}`);
    expect(lookups).toEqual(['rebind.test']);
    expect(opts.addresses).toEqual(['127.0.0.1']);
  });

  it('looks the host up again for each redirect hop, and refuses a hop that now resolves privately', async () => {
    let calls = 0;
    const lookup = async (): Promise<LookupAddress[]> => {
      calls++;
      return [{ address: calls === 1 ? '127.0.0.1' : '10.0.0.1', family: 4 }];
    };
    const opts = options({ lookup });
    const error = await urlFetchError(fetchImportUrl(`http://rebind.test:${port}/chain/1`, opts));
    expect(error.code).toBe('url_not_allowed');
    expect(error.message).toMatch(/redirect target .*rebind\.test resolves to 10\.0\.0\.1/);
    expect(opts.addresses).toEqual(['127.0.0.1']);
  });

  it('tries the next checked address when one refuses the connection', async () => {
    const lookup = async (): Promise<LookupAddress[]> => [
      { address: '127.0.0.2', family: 4 }, // nothing listens there on this port
      { address: '127.0.0.1', family: 4 },
    ];
    const opts = options({ lookup });
    expect((await fetchImportUrl(`http://two.test:${port}/text`, opts)).text).toBe('héllo ✓');
    expect(opts.addresses).toEqual(['127.0.0.2', '127.0.0.1']);
  });

  it('refuses a connection whose socket reports another address than the checked one', async () => {
    const lying: ConnectStep = async (request) => ({ ...(await connectPinned(request)), remoteAddress: '10.0.0.9' });
    const error = await urlFetchError(fetchImportUrl(`${base}/text`, options({ connect: lying })));
    expect(error.code).toBe('url_not_allowed');
    expect(error.message).toMatch(/connected to 10\.0\.0\.9, not the checked 127\.0\.0\.1/);
  });
});

describe('redirects', () => {
  it('follows up to 3 redirects and reports the final URL', async () => {
    const result = await fetchImportUrl(`${base}/chain/3`, options());
    expect(result).toMatchObject({ text: 'end of chain', finalUrl: `${base}/chain/0` });
  });

  it('fails on the 4th redirect', async () => {
    const error = await urlFetchError(fetchImportUrl(`${base}/chain/4`, options()));
    expect(error.code).toBe('fetch_failed');
    expect(error.message).toMatch(/too many redirects \(more than 3\)/);
  });

  it('honours a lower maxRedirects', async () => {
    const error = await urlFetchError(fetchImportUrl(`${base}/chain/1`, options({ maxRedirects: 0 })));
    expect(error.message).toMatch(/too many redirects/);
  });
});

describe('responses that cannot be imported', () => {
  it.each([
    ['/binary', /application\/octet-stream; only text/],
    ['/image', /image\/png; only text/],
    ['/untyped', /no Content-Type/],
    ['/gzip', /gzip-encoded/],
    ['/missing', /answered HTTP 404/],
  ])('%s', async (path, message) => {
    const error = await urlFetchError(fetchImportUrl(`${base}${path}`, options()));
    expect(error.code).toBe('fetch_failed');
    expect(error.message).toMatch(message);
  });

  it('accepts a body of exactly maxBytes', async () => {
    expect((await fetchImportUrl(`${base}/exactly-1000`, options({ maxBytes: 1000 }))).text).toHaveLength(1000);
  });

  it.each(['/big', '/big-chunked'])('refuses %s past maxBytes', async (path) => {
    const error = await urlFetchError(fetchImportUrl(`${base}${path}`, options({ maxBytes: 1000 })));
    expect(error.code).toBe('fetch_failed');
    expect(error.message).toMatch(/larger than the import limit of 1000 bytes/);
  });

  it.each(['/slow-headers', '/slow-body'])('gives up on %s at the timeout', async (path) => {
    const error = await urlFetchError(fetchImportUrl(`${base}${path}`, options({ timeoutMs: 300 })));
    expect(error.code).toBe('fetch_failed');
    expect(error.message).toBe('timed out after 300 ms');
  });

  it('stops when the caller cancels', async () => {
    const controller = new AbortController();
    const pending = fetchImportUrl(`${base}/slow-headers`, options({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 50);
    const error = await urlFetchError(pending);
    expect(error.message).toMatch(/cancelled/);
  });

  it('reports a host that does not resolve', async () => {
    const lookup = async (): Promise<LookupAddress[]> => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.test'), { code: 'ENOTFOUND' });
    };
    const error = await urlFetchError(fetchImportUrl('http://nowhere.test/', options({ lookup })));
    expect(error).toMatchObject({ code: 'fetch_failed', message: 'cannot resolve nowhere.test: ENOTFOUND' });
  });

  it('reports a refused connection', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const freePort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await urlFetchError(fetchImportUrl(`http://127.0.0.1:${freePort}/`, options()));
    expect(error.code).toBe('fetch_failed');
    expect(error.message).toMatch(/cannot connect to 127\.0\.0\.1:\d+: ECONNREFUSED/);
  });
});
