import { verb } from '../kit.js';
import { isLoopbackHost } from '../../api/error-mapping.js';
import { checkBaseUrl, DEFAULT_BASE_URL } from '../../api/types.js';
import type { Column, Context, KeySource } from '../../context.js';
import { CliError, ExitCode } from '../../errors.js';
import { type Check, fail, ok, warn } from './checks.js';
import { checkConfigFile, checkProxy, configFilePath } from './local-checks.js';

/**
 * `facectl doctor`: every check runs (one failing does not hide the others), each ends as one line with
 * its status and the fix; the exit code is 1 when any check failed. Nothing is written anywhere.
 */

const COLUMNS: Column<Check>[] = [
  { header: 'status', value: (c) => c.status },
  { header: 'check', value: (c) => c.name },
  { header: 'detail', value: (c) => c.detail },
  { header: 'fix', value: (c) => c.fix ?? '' },
];

const PROFILE_REFUSALS = new Set(['invalid_profile', 'unknown_profile']);

const KEY_SOURCES: Record<KeySource, string> = {
  stdin: '--api-key-stdin',
  env: 'the FACECTL_API_KEY variable',
  profile: 'the stored profile',
};

export default verb({
  description:
    'Check the setup, one line per check with its status (ok, warn, fail) and a fix: the configuration ' +
    'file and its modes, which key is used and whether the service accepts it (expiry, scopes, budget, ' +
    'plan), the base URL (reachability, TLS), proxy variables and clock skew. Exits 1 when a check fails. ' +
    'Asks the service about the key with an endpoint the published interface does not show ' +
    '(GET /v1/auth/api-keys/current).',
  examples: [
    'facectl doctor',
    'facectl doctor --json | jq \'.checks[] | select(.status != "ok")\'',
    'FACECTL_API_KEY=fcs_... facectl doctor --base-url https://api.example.com',
  ],
  run: (ctx) => doctor(ctx),
});

async function doctor(ctx: Context): Promise<void> {
  const checks = await runDoctor(ctx);
  if (ctx.out.json) ctx.out.record({ checks });
  else ctx.out.list(checks, COLUMNS);
  const failed = checks.filter((c) => c.status === 'fail');
  if (failed.length > 0) {
    throw new CliError(
      `${failed.length} of ${checks.length} checks failed: ${failed.map((c) => c.name).join(', ')}`,
      ExitCode.error,
      { code: 'doctor_failed', hint: 'apply the fixes above, then run `facectl doctor` again' },
    );
  }
}

export async function runDoctor(ctx: Context): Promise<Check[]> {
  // The file first: opening the store (credentials) would tighten a loose mode before it is seen.
  const checks: Check[] = checkConfigFile(configFilePath(ctx.env), ctx.runtime.platform);

  let baseUrlText = ctx.globals.baseUrl || ctx.env.FACECTL_BASE_URL || undefined;
  let key: { key: string; source: KeySource } | undefined;
  try {
    const creds = await ctx.credentials();
    baseUrlText = creds.baseUrl;
    creds.checkNamedProfile?.();
    key = await creds.apiKey();
    checks.push(
      key
        ? ok(
            'key source',
            `${key.key.slice(0, 12)}… from ${KEY_SOURCES[key.source]} (profile ${creds.profile}` +
              `${key.source === 'profile' && creds.keyBaseUrl ? `, saved for ${creds.keyBaseUrl}` : ''})`,
          )
        : fail(
            'key source',
            `no API key: not given with --api-key-stdin, FACECTL_API_KEY is not set, profile "${creds.profile}" has none`,
            'run `facectl auth login` (or set FACECTL_API_KEY)',
          ),
    );
  } catch (error) {
    // A profile named on the command line (or FACECTL_PROFILE) that cannot be used is refused as by any
    // command (exit 2), not reported as a failed check.
    if (error instanceof CliError && PROFILE_REFUSALS.has(error.code)) throw error;
    const hint = error instanceof CliError && error.hint ? error.hint : 'run `facectl auth login`';
    checks.push(fail('key source', `cannot resolve the key: ${(error as Error).message}`, hint));
  }

  let base: URL;
  try {
    base = checkBaseUrl(baseUrlText ?? DEFAULT_BASE_URL, 'the base URL', (url) => `set it to ${url}`);
  } catch (error) {
    const { message, hint } = error as CliError;
    checks.push(fail('base url', message, hint ?? 'set a valid one: `facectl config set base_url https://...`'));
    return checks;
  }
  const loopback = isLoopbackHost(base.hostname);
  const plainRemote = base.protocol === 'http:' && !loopback;
  checks.push(
    plainRemote
      ? warn(
          'base url',
          `${base.href} is plain http to a non-loopback host: the key would cross the network unencrypted` +
            (ctx.globals.insecureHttp ? '' : ' (facectl refuses to send it without --insecure-http)'),
          'use an https:// base URL',
        )
      : ok('base url', base.href.replace(/\/$/, '')),
  );
  const proxy = checkProxy(ctx.env, base);
  checks.push(proxy);
  const proxied = proxy.detail.includes(' go through ');

  const { checkTls, probeService } = await import('./network-checks.js');
  const spinner = ctx.out.spinner(`Checking ${base.host}`);
  try {
    const sendKey = key !== undefined && !(plainRemote && !ctx.globals.insecureHttp);
    const probe = await probeService(ctx, base, sendKey ? key?.key : undefined);
    if (base.protocol === 'https:') checks.push(await checkTls(ctx, base, proxied, probe));
    else
      checks.push(
        plainRemote
          ? warn('tls', `not used: traffic to ${base.host} is unencrypted`, 'use an https:// base URL')
          : ok('tls', 'not used (plain http to a loopback address)'),
      );
    checks.push(probe.reachability);
    if (key === undefined) checks.push(warn('key works', 'not checked: no API key', 'run `facectl auth login`'));
    else if (!sendKey)
      checks.push(
        fail(
          'key works',
          `not checked: facectl refuses to send the key over plain http to ${base.host}`,
          'use an https:// base URL, or pass --insecure-http if you accept the risk',
        ),
      );
    else checks.push(probe.key ?? warn('key works', 'not checked: the service was not reached', 'see "reachable"'));
    checks.push(probe.clock);
  } finally {
    spinner.stop();
  }
  return checks;
}
