import { connect, type PeerCertificate } from 'node:tls';
import type { AnswerOf } from '../../api/answers.js';
import { readAnswer } from '../../api/client.js';
import { errorFromResponse, type ExchangeInfo, networkErrorFrom, NEW_KEY_HINTS } from '../../api/error-mapping.js';
import { debugOption } from '../../api/context-client.js';
import { saysJson, Transport } from '../../api/transport.js';
import type { Context, KeySource } from '../../context.js';
import { getCurrentApiKey } from '../../contract/keys.js';
import { CliError } from '../../errors.js';
import { VERSION } from '../../version.js';
import { usd } from '../kit.js';
import { type Check, fail, ok, warn } from './checks.js';

/** Checks that talk to the service: one GET through the commands' transport (proxies apply), and a TLS handshake. */

const PATH = '/v1/auth/api-keys/current';
const SKEW_LIMIT_S = 60;
const SOON_DAYS = 7;

/** `key`: absent when no key was sent or the service was not reached; `error`: the network failure, if any. */
export type Probe = { reachability: Check; key?: Check; clock: Check; error?: CliError };

export async function probeService(ctx: Context, base: URL, sent: { key: string; source: KeySource } | undefined) {
  const apiKey = sent?.key;
  const baseUrl = base.href.replace(/\/$/, '');
  const info = { method: 'GET', path: PATH, baseUrl };
  let transport: Transport;
  try {
    transport = new Transport({
      baseUrl: base,
      env: ctx.env,
      sleep: ctx.clock.sleep,
      maxRetries: 0,
      connectTimeoutMs: 5_000,
      headersTimeoutMs: 10_000,
      bodyTimeoutMs: 10_000,
      maxResponseBytes: 1024 * 1024,
      secrets: () => (apiKey ? [apiKey] : []),
      // --debug shows the probe's exchange, as every command's (the fixes quoted from them say to use it).
      ...debugOption(ctx),
    });
  } catch (error) {
    // A proxy variable the transport refuses (SOCKS, not a URL): reported as a check, not a crash.
    if (!(error instanceof CliError)) throw error;
    return unreached(error, 'check the proxy variables');
  }
  const headers: Record<string, string> = {
    accept: 'application/json',
    'user-agent': `facectl/${VERSION} node/${ctx.runtime.nodeVersion}`,
  };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  const started = performance.now();
  try {
    const result = await transport.send({
      method: 'GET',
      path: `${base.pathname.replace(/\/$/, '')}${PATH}`,
      headers,
      repeatable: false,
      signal: ctx.signal,
      info,
    });
    const elapsed = Math.round(performance.now() - started);
    const received = ctx.clock.now();
    const answered = `${baseUrl} answered HTTP ${result.status} in ${elapsed} ms`;
    // A page of a web server or proxy (not JSON) is something else at the URL.
    return {
      reachability: saysJson(result.headers)
        ? ok('reachable', answered)
        : fail(
            'reachable',
            `${answered}, not in JSON: not an answer of the Face Compilation Service`,
            'check the base URL',
          ),
      clock: clockCheck(result.headers.date, received),
      ...(sent && { key: await keyCheck(result.status, result.text, info, received, sent.source) }),
    };
  } catch (error) {
    const cliError = error instanceof CliError ? error : networkErrorFrom(error, info, transport.limits);
    return unreached(cliError, 'check the base URL and your network');
  } finally {
    await transport.close().catch(() => {});
  }
}

function unreached(error: CliError, fix: string): Probe {
  return {
    reachability: fail('reachable', error.message, error.hint ?? fix),
    clock: warn('clock skew', 'not checked: the service was not reached', 'see "reachable"'),
    error,
  };
}

function clockCheck(date: string | string[] | undefined, now: Date): Check {
  const value = Array.isArray(date) ? date[0] : date;
  const serviceTime = value ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(serviceTime)) {
    const fix = 'none needed unless expiry looks wrong';
    return warn('clock skew', 'not checked: the service sent no valid Date header', fix);
  }
  // A Date header shows whole seconds, cut: the service's clock read it up to a second later.
  const skew = Math.round((now.getTime() - serviceTime - 500) / 1000);
  const text =
    skew === 0
      ? "this machine's clock agrees with the service's (to the second its Date header shows)"
      : `this machine is ${Math.abs(skew)} s ${skew >= 0 ? 'ahead of' : 'behind'} the service`;
  if (Math.abs(skew) > SKEW_LIMIT_S) {
    return warn('clock skew', text, 'synchronise the system clock (e.g. `timedatectl set-ntp true`, or enable NTP)');
  }
  return ok('clock skew', text);
}

async function keyCheck(status: number, text: string, info: ExchangeInfo, now: Date, source: KeySource) {
  const name = 'key works';
  const newKey = NEW_KEY_HINTS[source];
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {
    // Not JSON: reported below by status or schema.
  }
  if (status >= 400) {
    const error = errorFromResponse(status, json, info);
    return fail(name, error.message, status === 401 ? newKey : (error.hint ?? newKey));
  }
  // Read as every command reads it (api/answers.ts): a field left out is told as unknown.
  let current: AnswerOf<typeof getCurrentApiKey> | undefined;
  if (status >= 200 && status < 300)
    current = (await readAnswer(getCurrentApiKey, json).catch(() => undefined)) as typeof current;
  if (!current) {
    return fail(
      name,
      `unexpected answer from GET ${PATH} (HTTP ${status}): not the Face Compilation Service?`,
      'check the base URL; run `facectl auth status --debug` to see the exchange',
    );
  }
  const { budget_usd: budget, spent_usd: spent } = current;
  const left = typeof budget === 'number' && typeof spent === 'number' ? Math.max(0, budget - spent) : null;
  const expires = typeof current.expires_at === 'string' ? Date.parse(current.expires_at) : null;
  const detail = [
    `${current.key_prefix ?? 'key'} (${current.name ?? 'unnamed'})`,
    `plan ${current.plan ?? 'unknown'}`,
    `scopes ${current.scopes?.join(',') ?? 'unknown'}`,
    budget === null
      ? 'budget unlimited'
      : typeof budget !== 'number'
        ? 'budget unknown'
        : `budget left ${left === null ? 'unknown' : usd(left)} of ${usd(budget)}`,
    current.expires_at === null
      ? 'never expires'
      : expires === null
        ? 'expiry unknown'
        : `expires ${current.expires_at}`,
  ].join(', ');
  // Not `keys create` with this key: a key made with it expires with it (the service refuses a later expiry).
  const renew = `${newKey}, made with a longer-lived key than this one (a key expires no later than the key that makes it)`;
  if (expires !== null && expires <= now.getTime()) return fail(name, `expired: ${detail}`, renew);
  if (expires !== null && expires - now.getTime() < SOON_DAYS * 86_400_000) {
    const days = Math.ceil((expires - now.getTime()) / 86_400_000);
    return warn(name, `expires in ${days} day${days === 1 ? '' : 's'}: ${detail}`, renew);
  }
  if (left !== null && left <= 0) {
    return warn(
      name,
      `budget used up: ${detail}`,
      // Nor with this key: a key's spending counts against the budget of every key above it (facectl serve).
      `${newKey}, made with a key that has budget left (a key made with this one spends out of its budget, which is used up)`,
    );
  }
  if (current.scopes && current.scopes.length === 0) {
    return warn(name, `no scopes: ${detail}`, 'create a key with the scopes you need (`--scopes v1:*`)');
  }
  return ok(name, detail);
}

/** The certificate of an https base URL; through a proxy, the tunnelled request has verified it already. */
export async function checkTls(ctx: Context, base: URL, proxied: boolean, probe: Probe): Promise<Check> {
  if (proxied) {
    if (!probe.error) return ok('tls', 'certificate accepted (checked through the proxy)');
    return fail('tls', `not verified through the proxy: ${probe.error.message}`, 'see "reachable"');
  }
  const host = base.hostname.replace(/^\[|\]$/g, '');
  const port = Number(base.port || 443);
  return new Promise<Check>((resolve) => {
    const socket = connect({ host, port, servername: /^[\d.:]+$/.test(host) ? undefined : host, timeout: 5_000 });
    const done = (check: Check) => {
      socket.destroy();
      resolve(check);
    };
    socket.once('secureConnect', () => {
      const cert: PeerCertificate = socket.getPeerCertificate();
      const validTo = Date.parse(cert.valid_to);
      const who = `${cert.subject?.CN ?? host}, issued by ${cert.issuer?.O ?? cert.issuer?.CN ?? 'unknown'}`;
      const daysLeft = Math.floor((validTo - ctx.clock.now().getTime()) / 86_400_000);
      done(
        daysLeft < 14
          ? warn(
              'tls',
              `certificate (${who}) expires in ${daysLeft} days (${cert.valid_to})`,
              'renew the server certificate',
            )
          : ok('tls', `certificate valid (${who}) until ${cert.valid_to}`),
      );
    });
    socket.once('timeout', () =>
      done(fail('tls', `no TLS handshake with ${base.host} within 5 s`, 'check the base URL and your network')),
    );
    socket.once('error', (error: NodeJS.ErrnoException) => {
      const tlsProblem = /CERT|SELF_SIGNED|TLS|SSL|UNABLE_TO/i.test(error.code ?? '');
      const said = `${tlsProblem ? 'certificate refused' : 'handshake failed'}: ${error.code ?? ''} ${error.message}`;
      const fix = tlsProblem
        ? 'fix the server certificate, or point NODE_EXTRA_CA_CERTS at your CA bundle'
        : 'check the base URL and your network';
      done(fail('tls', said.replace(/\s+/g, ' '), fix));
    });
  });
}
