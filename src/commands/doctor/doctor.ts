import { chmodSync, existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { isLoopbackHost } from '../../api/error-mapping.js';
import { noProxyEntry, proxyVariable } from '../../api/proxy.js';
import { checkBaseUrl, DEFAULT_BASE_URL } from '../../api/types.js';
import { keyPrefix, SOURCE_NAMES } from '../../config/credentials.js';
import { writeRefusal } from '../../config/file-safety.js';
import { readConfigFile } from '../../config/file-store.js';
import { configFilePath, stateDir } from '../../config/paths.js';
import { ConfigFileError, parseConfigText } from '../../config/profile-store.js';
import type { Column, Context, KeySource, Paint } from '../../context.js';
import { CliError, ExitCode, forProfile, withoutKeys } from '../../errors.js';
import { checkStateDirectory } from '../../state/state-dir.js';
import { verb } from '../kit.js';
import { type Check, fail, ok, warn } from './checks.js';

const STATUS_PAINT: Record<string, Paint> = { ok: 'green', warn: 'yellow', fail: 'red' };

const COLUMNS: Column<Check>[] = [
  { header: 'status', value: (c) => c.status, style: (status) => STATUS_PAINT[status] },
  { header: 'check', value: (c) => c.name },
  { header: 'detail', value: (c) => c.detail },
  { header: 'fix', value: (c) => c.fix ?? '' },
];

export default verb({
  description:
    'Check the setup, one line per check with its status (ok, warn, fail) and a fix: the configuration ' +
    'file and its modes, the state directory (where batches record what was sent), which key is used and ' +
    'whether the service accepts it (expiry, scopes, budget, plan), the base URL (reachability, TLS), proxy ' +
    'variables and clock skew. Exits 1 when a check fails. ' +
    'Asks the service about the key with an endpoint the published interface does not show ' +
    '(GET /v1/auth/api-keys/current).',
  examples: [
    'facectl doctor',
    'facectl doctor --json | jq \'.checks[] | select(.status != "ok")\'',
    'FACECTL_API_KEY=fcs_... facectl doctor --base-url https://api.example.com',
  ],
  async run(ctx) {
    // A report people paste into issues: a key given where a URL or a name belongs shows as its prefix.
    // Each command a check quotes names the --profile and --base-url in use, as error hints do.
    const { profile, baseUrl } = ctx.globals;
    const checks = (await runDoctor(ctx)).map((check) => ({
      ...check,
      detail: forProfile(withoutKeys(check.detail), profile, baseUrl),
      fix: check.fix && forProfile(withoutKeys(check.fix), profile, baseUrl),
    }));
    if (ctx.out.json) ctx.out.record({ checks });
    // On a terminal no empty fix column when every check passed (piped, the columns stay as they are).
    else ctx.out.list(checks, ctx.io.stdoutIsTTY && !checks.some((c) => c.fix) ? COLUMNS.slice(0, 3) : COLUMNS);
    const failed = checks.filter((c) => c.status === 'fail');
    if (failed.length > 0) {
      throw new CliError(
        `${failed.length} of ${checks.length} checks failed: ${failed.map((c) => c.name).join(', ')}`,
        ExitCode.error,
        {
          code: 'doctor_failed',
          hint: `apply ${ctx.out.json ? 'the fix of each failed check (.checks[].fix)' : 'the fixes above'}, then run \`facectl doctor\` again`,
        },
      );
    }
  },
});

async function runDoctor(ctx: Context): Promise<Check[]> {
  // The file first: opening the store (credentials) would tighten a loose mode before it is seen.
  const config = checkConfigFile(ctx.env, ctx.runtime.platform);
  // A key cannot be stored (nor read) until that is fixed: the fixes of the key's rows send there.
  const configFailed = config.find((check) => check.status === 'fail')?.name;
  const login = configFailed ? `see "${configFailed}"` : 'run `facectl auth login`';
  const checks: Check[] = [...config, checkState(ctx.env)];

  let baseUrlText = ctx.globals.baseUrl || ctx.env.FACECTL_BASE_URL || undefined;
  let key: { key: string; source: KeySource } | undefined;
  try {
    const creds = await ctx.credentials();
    baseUrlText = creds.baseUrl;
    creds.checkNamedProfile();
    key = await creds.apiKey();
    checks.push(
      key
        ? ok(
            'key source',
            // A key from outside the file is the profile's only when the file was read for it (a ring saw
            // "(profile default)" beside --base-url and FACECTL_API_KEY, the file's default_profile another).
            `${keyPrefix(key.key)}… from ${SOURCE_NAMES[key.source]}` +
              (key.source === 'profile'
                ? ` (profile ${creds.profile}${creds.keyBaseUrl ? `, saved for ${creds.keyBaseUrl}` : ''})`
                : ''),
          )
        : fail('key source', creds.describe(), `${login} (or set FACECTL_API_KEY)`),
    );
  } catch (error) {
    // A profile named by --profile or FACECTL_PROFILE that cannot be used is refused (exit 2), not a failed check.
    if (error instanceof CliError && ['invalid_profile', 'unknown_profile'].includes(error.code)) throw error;
    // The profile's base_url: the service to check is not known, nor whether a key is stored for it.
    if (error instanceof CliError && ['invalid_base_url', 'base_url_with_version'].includes(error.code)) {
      checks.push(fail('base url', error.message, error.hint ?? 'run `facectl config set base_url https://...`'));
      return checks;
    }
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
  const plainRemote = base.protocol === 'http:' && !isLoopbackHost(base.hostname);
  const proxy = checkProxy(ctx.env, base);
  checks.push(
    plainRemote
      ? warn(
          'base url',
          `${base.href} is plain http to a non-loopback host: the key would cross the network unencrypted` +
            (ctx.globals.insecureHttp ? '' : ' (facectl refuses to send it without --insecure-http)'),
          'use an https:// base URL',
        )
      : ok('base url', base.href.replace(/\/$/, '')),
    proxy,
  );
  const proxied = proxy.detail.includes(' go through ');

  const { checkTls, probeService } = await import('./network-checks.js');
  const spinner = ctx.out.spinner(`Checking ${base.host}`);
  try {
    const sendKey = key !== undefined && !(plainRemote && !ctx.globals.insecureHttp);
    const probe = await probeService(ctx, base, sendKey ? key : undefined);
    checks.push(
      base.protocol === 'https:'
        ? await checkTls(ctx, base, proxied, probe)
        : plainRemote
          ? warn('tls', `not used: traffic to ${base.host} is unencrypted`, 'use an https:// base URL')
          : ok('tls', 'not used (plain http to a loopback address)'),
      probe.reachability,
      key === undefined
        ? warn('key works', 'not checked: no API key for this base URL', configFailed ? login : 'see "key source"')
        : !sendKey
          ? fail(
              'key works',
              `not checked: facectl refuses to send the key over plain http to ${base.host}`,
              'use an https:// base URL, or pass --insecure-http if you accept the risk',
            )
          : (probe.key ?? warn('key works', 'not checked: the service was not reached', 'see "reachable"')),
      probe.clock,
    );
  } finally {
    spinner.stop();
  }
  return checks;
}

function checkConfigFile(env: Context['env'], platform: NodeJS.Platform): Check[] {
  const name = 'config file';
  const path = configFilePath(env);
  // Another user's file or directory, or a symlink: facectl refuses to write it, so say so first.
  const refusal = writeRefusal(path);
  const unsafe = refusal ? [fail('config file safety', refusal.problem, refusal.fix)] : [];
  let text: string | undefined;
  try {
    // Read as every command reads it, so it fails as they do.
    text = readConfigFile(env);
  } catch (error) {
    const { message, hint } = error as ConfigFileError;
    return [fail(name, message, hint as string), ...unsafe];
  }
  if (text === undefined) {
    const said = `${path} does not exist yet`;
    return refusal
      ? [warn(name, `${said}, and cannot be made there`, 'see "config file safety"'), ...unsafe]
      : [ok(name, `${said} (nothing stored; \`facectl auth login\` creates it)`)];
  }
  try {
    parseConfigText(text, path);
  } catch (error) {
    return [fail(name, (error as Error).message, `fix or remove ${path}; facectl never clears it`), ...unsafe];
  }
  // Modes tell nothing of another owner's file (and chmod would follow a symlink), nor anything on Windows.
  return [ok(name, `${path} parses`), ...(refusal || platform === 'win32' ? unsafe : checkModes(path))];
}

/** Checked as a batch checks it before writing its records (the same words and fix), making nothing. */
function checkState(env: Context['env']): Check {
  const dir = stateDir(env);
  try {
    checkStateDirectory(dir);
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    return fail('state directory', error.message.replace(/; nothing was sent$/, ''), error.hint as string);
  }
  const said = existsSync(dir) ? '' : ' does not exist yet (no batch recorded; `docs submit` of a batch creates it)';
  return ok('state directory', `${dir}${said}`);
}

function checkModes(path: string): Check[] {
  const fileMode = statSync(path).mode & 0o777;
  const dir = dirname(path);
  const dirMode = statSync(dir).mode & 0o777;
  const dirCheck =
    (dirMode & 0o077) === 0
      ? ok('config directory mode', octal(dirMode))
      : warn('config directory mode', `${dir} has mode ${octal(dirMode)}: others can list it`, `chmod 700 ${dir}`);
  if ((fileMode & 0o077) === 0) return [ok('config file mode', `${octal(fileMode)} (only you can read it)`), dirCheck];
  // A file others can read is made 0600, as the store would (so the run warns once); the command if that fails.
  try {
    chmodSync(path, 0o600);
  } catch {
    const said = `${path} has mode ${octal(fileMode)}: others can read it`;
    return [warn('config file mode', said, `chmod 600 ${path}`), dirCheck];
  }
  const said = `${path} had mode ${octal(fileMode)} (others could read it); changed it to 0600`;
  return [
    warn('config file mode', said, 'nothing left to do; if it happens again, check which tool writes that file'),
    dirCheck,
  ];
}

/** Which proxy variable the transport (api/proxy.ts) will use for the base URL, and whether it is bypassed. */
export function checkProxy(env: Context['env'], base: URL): Check {
  const name = 'proxy';
  const variable = proxyVariable(base, env);
  if (!variable) {
    // None for this scheme: any proxy variable set is the other scheme's.
    const other = ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY'].find((key) => env[key]);
    const said = other ? `${other} is set but does not apply to ${base.protocol} URLs` : 'no proxy variables set';
    return ok(name, `${said}; direct connection`);
  }
  const [key, value] = variable;
  const url = value.includes('://') ? value : `http://${value}`;
  const proxy = URL.parse(url);
  if (!proxy)
    return fail(name, `${key} is not a valid URL`, `fix ${key} (e.g. http://proxy.example.com:3128) or unset it`);
  const shown = `${proxy.protocol}//${proxy.username ? '***@' : ''}${proxy.host}`;
  if (isLoopbackHost(base.hostname)) {
    return ok(name, `${key}=${shown} is not used for the loopback address ${base.host} (never proxied)`);
  }
  const noProxyName = env.no_proxy !== undefined ? 'no_proxy' : 'NO_PROXY';
  const bypass = noProxyEntry(base, env[noProxyName] ?? '');
  if (bypass !== undefined) {
    return ok(name, `${key}=${shown} is bypassed for ${base.host} by ${noProxyName} entry "${bypass}"`);
  }
  return ok(name, `requests to ${base.host} go through ${key}=${shown}`);
}

const octal = (mode: number): string => mode.toString(8).padStart(4, '0');
