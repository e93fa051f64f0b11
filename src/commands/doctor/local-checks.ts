import { chmodSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { isLoopbackHost } from '../../api/error-mapping.js';
import { noProxyEntry, proxyVariable } from '../../api/proxy.js';
import { ConfigReadRefusal, readConfigText, writeRefusal } from '../../config/file-safety.js';
import { configFilePath } from '../../config/paths.js';
import { checkConfigShape } from '../../config/profile-store.js';
import { type Check, fail, ok, warn } from './checks.js';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The checks that need no network: the configuration file on disk and the proxy variables. The file is
 * inspected directly (not through the store), before anything opens the store, because opening it tightens
 * a loose mode and so would hide the very problem doctor is asked to report.
 */

export { configFilePath };

export function checkConfigFile(path: string, platform: NodeJS.Platform): Check[] {
  const name = 'config file';
  // Another user's file or directory, or a symlink: facectl refuses to write it, so say so first.
  const refusal = writeRefusal(path);
  const unsafe = refusal ? [fail('config file safety', refusal.problem, refusal.fix)] : [];
  let text: string | undefined;
  try {
    text = readConfigText(path);
  } catch (error) {
    if (error instanceof ConfigReadRefusal) return [fail(name, error.problem, error.fix), ...unsafe];
    const code = (error as NodeJS.ErrnoException).code;
    return [
      fail(name, `cannot read ${path} (${code ?? (error as Error).message})`, `check the permissions of ${path}`),
      ...unsafe,
    ];
  }
  if (text === undefined) {
    return [ok(name, `${path} does not exist yet (nothing stored; \`facectl auth login\` creates it)`), ...unsafe];
  }
  try {
    checkConfigShape(JSON.parse(text), path);
  } catch (error) {
    return [
      fail(name, `${path} is broken: ${(error as Error).message}`, `fix or remove ${path}; facectl never clears it`),
      ...unsafe,
    ];
  }
  // Modes say nothing about who can read a file someone else owns (and chmod would follow a symlink),
  // nor anything at all on Windows.
  return [ok(name, `${path} parses`), ...(refusal || platform === 'win32' ? unsafe : checkModes(path))];
}

function checkModes(path: string): Check[] {
  const checks: Check[] = [];
  const fileMode = statSync(path).mode & 0o777;
  checks.push(
    (fileMode & 0o077) === 0
      ? ok('config file mode', `${octal(fileMode)} (only you can read the key)`)
      : tightenFileMode(path, fileMode),
  );
  const dir = dirname(path);
  const dirMode = statSync(dir).mode & 0o777;
  checks.push(
    (dirMode & 0o077) === 0
      ? ok('config directory mode', `${octal(dirMode)}`)
      : warn('config directory mode', `${dir} has mode ${octal(dirMode)}: others can list it`, `chmod 700 ${dir}`),
  );
  return checks;
}

/**
 * A file others can read is made 0600, as the configuration store does whenever it reads one (so the
 * store has nothing left to fix and the run warns once); told, with the command when that fails.
 */
function tightenFileMode(path: string, fileMode: number): Check {
  try {
    chmodSync(path, 0o600);
  } catch {
    return warn(
      'config file mode',
      `${path} has mode ${octal(fileMode)}: others can read the stored key`,
      `chmod 600 ${path}`,
    );
  }
  return warn(
    'config file mode',
    `${path} had mode ${octal(fileMode)} (others could read the stored key); changed it to 0600`,
    'nothing left to do; if it happens again, check which tool writes that file',
  );
}

/** Which proxy variable the transport (api/proxy.ts) will use for the base URL, and whether it is bypassed. */
export function checkProxy(env: Env, base: URL): Check {
  const name = 'proxy';
  const variable = proxyVariable(base, env);
  if (!variable) {
    // None for this scheme: any proxy variable set is the other scheme's.
    const other = ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY'].find((key) => env[key]);
    return ok(
      name,
      other
        ? `${other} is set but does not apply to ${base.protocol} URLs; direct connection`
        : 'no proxy variables set; direct connection',
    );
  }
  const [varName, value] = variable;
  let proxy: URL;
  try {
    proxy = new URL(value.includes('://') ? value : `http://${value}`);
  } catch {
    return fail(
      name,
      `${varName} is not a valid URL`,
      `fix ${varName} (e.g. http://proxy.example.com:3128) or unset it`,
    );
  }
  const shown = `${proxy.protocol}//${proxy.username ? '***@' : ''}${proxy.host}`;
  if (isLoopbackHost(base.hostname)) {
    return ok(name, `${varName}=${shown} is not used for the loopback address ${base.host} (never proxied)`);
  }
  const noProxyName = env.no_proxy !== undefined ? 'no_proxy' : 'NO_PROXY';
  const bypass = noProxyEntry(base, env[noProxyName] ?? '');
  if (bypass !== undefined) {
    return ok(name, `${varName}=${shown} is bypassed for ${base.host} by ${noProxyName} entry "${bypass}"`);
  }
  return ok(name, `requests to ${base.host} go through ${varName}=${shown}`);
}

function octal(mode: number): string {
  return mode.toString(8).padStart(4, '0');
}
