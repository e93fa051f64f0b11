// Case 40 of reliability.md: the import fetcher refuses file:, data:, loopback, cloud metadata,
// IPv4-mapped and numeric spellings of loopback, credentials in the URL, names that resolve to a private
// address, and redirects to any of those. The connect step is a spy that refuses to open a socket to
// anything but loopback, so a broken defence makes these tests fail without ever reaching a real
// private host; each test also asserts the spy was never asked for a refused address.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LookupAddress } from 'node:dns';
import type { ConnectRequest, ConnectResponse } from '../../src/service/url-fetch/connect.js';
import { fetchImportUrl } from '../../src/service/url-fetch/index.js';
import { spyConnect, urlFetchError } from '../helpers/url-fetch-spy.js';

// A public address that only the spy "serves", from canned responses: no socket is ever opened to it.
const FAKE_PUBLIC = '93.184.216.34';

function redirectFrom(request: ConnectRequest, location: string): ConnectResponse {
  return {
    status: 302,
    headers: { location },
    remoteAddress: request.address,
    body: (async function* () {})(),
    close: () => {},
  };
}

// Test names resolve only through this table; nothing reaches real DNS.
const names: Record<string, string[]> = {
  'internal.test': ['10.0.0.1'],
  'mixed.test': [FAKE_PUBLIC, '10.0.0.1'],
  'mixed-loopback.test': ['127.0.0.1', '10.0.0.1'],
  'metadata.test': ['169.254.169.254'],
  'public.test': [FAKE_PUBLIC],
  localhost: ['127.0.0.1', '::1'],
};
const lookups: string[] = [];
async function lookup(hostname: string): Promise<LookupAddress[]> {
  lookups.push(hostname);
  const found = names[hostname];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
}

// The loopback server that refused URLs point at: it counts what reached it.
let target: http.Server;
let targetHits = 0;
let port = 0;
// The redirector: /go?to=<url> answers 302 to <url>.
let redirector: http.Server;
let redirectorHits = 0;
let redirectorPort = 0;

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  target = http.createServer((_req, res) => {
    targetHits++;
    res.writeHead(200, { 'content-type': 'text/plain' }).end('secret');
  });
  port = await listen(target);
  redirector = http.createServer((req, res) => {
    redirectorHits++;
    const to = new URL(req.url ?? '/', 'http://x').searchParams.get('to') ?? '/';
    res.writeHead(302, { location: to }).end();
  });
  redirectorPort = await listen(redirector);
});

afterAll(() => {
  target.closeAllConnections();
  target.close();
  redirector.closeAllConnections();
  redirector.close();
});

/** Fetches `url` through a fresh spy and checks it was refused: the error, and the addresses the spy was asked for. */
async function refused(url: string, { allowPrivate }: { allowPrivate: boolean }) {
  const spy = spyConnect();
  const error = await urlFetchError(fetchImportUrl(url, { allowPrivate, lookup, connect: spy.connect }));
  expect(error.code).toBe('url_not_allowed');
  return { error, addresses: spy.addresses };
}

describe('import URLs refused before any connection', () => {
  const cases: Array<[string, () => string, RegExp]> = [
    ['file:', () => 'file:///etc/passwd', /"file:" scheme/],
    ['data:', () => 'data:text/plain,hello', /"data:" scheme/],
    ['ftp:', () => 'ftp://example.com/doc.txt', /"ftp:" scheme/],
    ['javascript:', () => 'javascript:alert(1)', /"javascript:" scheme/],
    [
      'loopback 127.0.0.1',
      () => `http://127.0.0.1:${port}/`,
      /127\.0\.0\.1 is a loopback address.*--allow-private-urls/,
    ],
    ['cloud metadata', () => 'http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a link-local/],
    ['IPv4-mapped loopback', () => `http://[::ffff:127.0.0.1]:${port}/`, /IPv4-mapped form of 127\.0\.0\.1/],
    ['decimal loopback 2130706433', () => `http://2130706433:${port}/`, /127\.0\.0\.1 is a loopback/],
    ['hex loopback 0x7f.1', () => `http://0x7f.1:${port}/`, /127\.0\.0\.1 is a loopback/],
    ['IPv6 loopback', () => `http://[::1]:${port}/`, /::1 is a loopback address/],
    ['localhost', () => `http://localhost:${port}/`, /localhost resolves to 127\.0\.0\.1.*loopback/],
    ['credentials', () => 'http://user:pass@example.com/', /user name or password/],
    ['a user name alone', () => 'http://user@example.com/', /user name or password/],
    ['a name resolving to 10.0.0.1', () => 'http://internal.test/', /internal\.test resolves to 10\.0\.0\.1.*private/],
    ['a name resolving to public + private', () => 'http://mixed.test/', /mixed\.test resolves to 10\.0\.0\.1/],
    ['a name resolving to cloud metadata', () => 'http://metadata.test/', /link-local/],
    ['private 10.x', () => 'http://10.1.2.3/', /private/],
    ['private 192.168.x', () => 'http://192.168.1.1/', /private/],
    ['unspecified 0.0.0.0', () => `http://0.0.0.0:${port}/`, /"this network"/],
    ['IPv6 unique local', () => 'http://[fd00::1]/', /unique local/],
    ['NAT64 of cloud metadata', () => 'http://[64:ff9b::a9fe:a9fe]/', /NAT64 form of 169\.254\.169\.254/],
  ];

  it.each(cases)('%s', async (_name, url, message) => {
    const hitsBefore = targetHits;
    const { error, addresses } = await refused(url(), { allowPrivate: false });
    expect(error.message).toMatch(message);
    expect(addresses).toEqual([]);
    expect(targetHits).toBe(hitsBefore);
  });

  it('never echoes the password of a refused URL', async () => {
    const error = await urlFetchError(
      fetchImportUrl('https://alice:hunter2@example.com/x', { allowPrivate: true, lookup }),
    );
    expect(error.code).toBe('url_not_allowed');
    expect(error.message).not.toContain('hunter2');
  });

  it('does not look up the host of a URL with credentials', async () => {
    lookups.length = 0;
    await urlFetchError(fetchImportUrl('http://user:pass@public.test/', { allowPrivate: false, lookup }));
    expect(lookups).toEqual([]);
  });
});

describe('allowPrivate admits loopback only', () => {
  const cases = [
    'http://10.0.0.1/',
    'http://172.16.5.4/',
    'http://169.254.169.254/latest/meta-data/',
    'http://100.64.0.1/',
    'http://0.0.0.0/',
    'http://[::ffff:10.0.0.1]/',
    'http://[fe80::1]/',
    'http://[64:ff9b::7f00:1]/',
    'http://[2002:7f00:1::1]/',
    'http://internal.test/',
    'http://mixed-loopback.test/',
  ];

  it.each(cases)('%s', async (url) => {
    expect((await refused(url, { allowPrivate: true })).addresses).toEqual([]);
  });
});

describe('redirects to refused URLs', () => {
  const targets = [
    'file:///etc/passwd',
    'data:text/plain,hello',
    'http://169.254.169.254/latest/meta-data/',
    'http://user:pass@example.com/',
    'http://internal.test/',
    'http://mixed.test/',
    'http://10.0.0.1/',
    'http://[::ffff:10.0.0.1]/',
    'http://[fd00::1]/',
  ];

  // The redirector is a real loopback server, so these run with allowPrivate: true; the targets are
  // refused all the same.
  it.each(targets)('from a loopback server to %s', async (to) => {
    const before = redirectorHits;
    const url = `http://127.0.0.1:${redirectorPort}/go?to=${encodeURIComponent(to)}`;
    const { error, addresses } = await refused(url, { allowPrivate: true });
    expect(error.message).toMatch(/^redirect target/);
    expect(addresses).toEqual(['127.0.0.1']);
    expect(redirectorHits).toBe(before + 1);
  });

  // Redirects to loopback need a non-loopback redirector, or allowPrivate would admit the target:
  // the spy answers for a public address from a canned 302, without opening any socket.
  const loopbackTargets: Array<[string, () => string]> = [
    ['127.0.0.1', () => `http://127.0.0.1:${port}/`],
    ['[::ffff:127.0.0.1]', () => `http://[::ffff:127.0.0.1]:${port}/`],
    ['2130706433', () => `http://2130706433:${port}/`],
    ['localhost', () => `http://localhost:${port}/`],
  ];

  it.each(loopbackTargets)('from a public server to %s', async (_name, to) => {
    const spy = spyConnect((request) => (request.address === FAKE_PUBLIC ? redirectFrom(request, to()) : undefined));
    const before = targetHits;
    const error = await urlFetchError(
      fetchImportUrl('http://public.test/doc', { allowPrivate: false, lookup, connect: spy.connect }),
    );
    expect(error.code).toBe('url_not_allowed');
    expect(error.message).toMatch(/^redirect target .*loopback/);
    expect(spy.addresses).toEqual([FAKE_PUBLIC]);
    expect(targetHits).toBe(before);
  });

  it('still follows a redirect from a public server to another public URL', async () => {
    const spy = spyConnect((request) => {
      if (request.address !== FAKE_PUBLIC) return undefined;
      if (request.url.pathname === '/doc') return redirectFrom(request, '/moved');
      return {
        status: 200,
        headers: { 'content-type': 'text/plain' },
        remoteAddress: request.address,
        body: (async function* () {
          yield new TextEncoder().encode('moved here');
        })(),
        close: () => {},
      };
    });
    const result = await fetchImportUrl('http://public.test/doc', {
      allowPrivate: false,
      lookup,
      connect: spy.connect,
    });
    expect(result).toEqual({ text: 'moved here', finalUrl: 'http://public.test/moved', contentType: 'text/plain' });
    expect(spy.addresses).toEqual([FAKE_PUBLIC, FAKE_PUBLIC]);
  });
});
