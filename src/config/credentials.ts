import { checkBaseUrl, DEFAULT_BASE_URL } from '../api/types.js';
import type { ConfigStore, Context, Credentials, IO, KeySource } from '../context.js';
import { AuthError, UsageError } from '../errors.js';
import { readFirstLine } from '../io/stdin.js';
import { checkKnownProfile, checkProfileName, type ProfileSettings } from './profile-store.js';

/** `config` is opened only when flags and variables do not settle everything. */
type CredentialSources = Pick<Context, 'env' | 'globals' | 'config'> & Pick<IO, 'stdin' | 'stdinIsTTY'>;

/**
 * Key: `--api-key-stdin`, FACECTL_API_KEY, the profile's. Base URL: `--base-url`, FACECTL_BASE_URL, the
 * profile's, the default. Profile: `--profile`, FACECTL_PROFILE, `default_profile`, "default".
 */
export async function resolveCredentials(sources: CredentialSources): Promise<Credentials> {
  const { env, globals } = sources;
  const explicitProfile = globals.profile ?? nonEmpty(env.FACECTL_PROFILE);
  const keyOutsideConfig = globals.apiKeyStdin || nonEmpty(env.FACECTL_API_KEY) !== undefined;
  const urlOutsideConfig = nonEmpty(globals.baseUrl ?? env.FACECTL_BASE_URL) !== undefined;

  const store = keyOutsideConfig && urlOutsideConfig ? undefined : await sources.config();
  const profile = explicitProfile ?? store?.defaultProfile ?? 'default';
  const settings = store?.getProfile(profile) ?? {};

  // Checked here, so that what is wrong names where it came from.
  const flag = explicitProfile === undefined ? '' : ` --profile ${profile}`;
  const [given, baseUrlSource, name, fix] = (
    [
      [globals.baseUrl, 'flag', '--base-url', (url: string) => `run it with --base-url ${url}`],
      [env.FACECTL_BASE_URL, 'env', 'FACECTL_BASE_URL', (url: string) => `run \`export FACECTL_BASE_URL=${url}\``],
      [
        typeof settings.base_url === 'string' ? settings.base_url : undefined,
        'profile',
        `the base_url of profile "${profile}"`,
        (url: string) => `run \`facectl config set base_url ${url}${flag}\``,
      ],
    ] as const
  ).find(([url]) => nonEmpty(url)) ?? [DEFAULT_BASE_URL, 'default', undefined, undefined];
  const baseUrl = given as string;
  if (name !== undefined) checkBaseUrl(baseUrl, name, fix);

  const keyBaseUrl = typeof settings.api_key === 'string' && settings.api_key ? storedKeyBaseUrl(settings) : undefined;

  let cached: Promise<{ key: string; source: KeySource } | undefined> | undefined;
  const apiKey = () =>
    (cached ??= (async () => {
      if (globals.apiKeyStdin) {
        if (sources.stdinIsTTY) {
          throw new UsageError('--api-key-stdin reads the key from standard input, but it is a terminal', {
            hint: `pipe the key in, e.g. \`${pipeKeyIn(env)}\``,
          });
        }
        return { key: checkApiKey(await readFirstLine(sources.stdin), 'stdin'), source: 'stdin' as const };
      }
      const fromEnv = nonEmpty(env.FACECTL_API_KEY);
      if (fromEnv !== undefined) return { key: checkApiKey(fromEnv, 'env'), source: 'env' as const };
      // The key would come from the profile: one named on the line or in the environment must exist.
      if (store) checkExplicitProfile(store, sources);
      if (keyBaseUrl !== undefined) {
        // A stored key goes only to the service it was saved for (gh keeps one token per host).
        if (sameBaseUrl(keyBaseUrl, baseUrl)) {
          return { key: checkApiKey(settings.api_key as string, 'profile'), source: 'profile' as const };
        }
        // Moved with `config set base_url` (the profile's own URL is the new one): the key may move too.
        const moved = baseUrlSource === 'profile';
        throw new AuthError(
          `the key stored in profile "${profile}" was saved for ${keyBaseUrl}; it is not sent to ${trimmed(baseUrl)}`,
          {
            code: 'key_for_other_base_url',
            hint: moved
              ? `if ${trimmed(baseUrl)} is the same service at a new address, run \`facectl auth login --stored-key --profile ${profile}\` ` +
                `(it checks the key there and keeps it for it); else store a key for it with \`facectl auth login --profile ${profile}\``
              : `if ${trimmed(baseUrl)} is the same service at a new address (\`serve --data\` restarted on another port), run ` +
                `\`facectl auth login --stored-key --base-url ${trimmed(baseUrl)} --profile ${profile}\` (it checks the key there, ` +
                `then keeps it and the profile for it); else log in for it (\`facectl auth login --base-url ${trimmed(baseUrl)} ` +
                `--profile ${profile}\`), or give its key with FACECTL_API_KEY or --api-key-stdin`,
          },
        );
      }
      return undefined;
    })());

  return {
    baseUrl: trimmed(baseUrl),
    baseUrlSource,
    profile,
    ...(keyBaseUrl === undefined ? {} : { keyBaseUrl }),
    apiKey,
    checkNamedProfile: () => void (store ? checkExplicitProfile(store, sources) : checkNamedProfile(sources)),
    describe: () =>
      `no API key: not given with --api-key-stdin, FACECTL_API_KEY is not set, and profile "${profile}" has none`,
  };
}

/** A key piped into `auth login`: from FACECTL_API_KEY when it is set, else a variable a shell refuses as is. */
export const pipeKeyIn = (env: Record<string, string | undefined>): string =>
  `printenv ${nonEmpty(env.FACECTL_API_KEY) ? 'FACECTL_API_KEY' : '<VARIABLE>'} | facectl auth login --api-key-stdin`;

export const SOURCE_NAMES: Record<KeySource, string> = {
  stdin: 'standard input',
  env: 'FACECTL_API_KEY',
  profile: 'the stored profile',
};

/**
 * Refuses a key that could inject headers or is mangled (surrounding whitespace is trimmed), never repeating it.
 * `answer`: a key the service made (keys create --save), stored as it came: white space at its ends is refused too.
 */
export function checkApiKey(raw: string, source: KeySource | 'prompt' | 'answer'): string {
  const key = raw.trim();
  const from = source === 'prompt' ? 'the prompt' : source === 'answer' ? "the service's answer" : SOURCE_NAMES[source];
  if (key === '') throw new UsageError(`the API key from ${from} is empty`);
  if (source === 'answer' && key !== raw) throw new UsageError(`the API key from ${from} has white space at its ends`);
  if (!/^[\x21-\x7e]+$/.test(key)) {
    throw new UsageError(
      `the API key from ${from} contains whitespace, control or non-ASCII characters; refusing to send it`,
      {
        code: 'invalid_api_key',
        // A key copied from an Authorization header (a ring's find) carries its scheme.
        hint: /^bearer\s/i.test(key)
          ? 'give the key without the `Bearer ` before it (facectl sends that itself)'
          : 'check the key was copied whole and alone (one line, nothing else)',
      },
    );
  }
  return key;
}

const trimmed = (url: string): string => url.replace(/\/+$/, '');

/** `api_key_base_url`; for a key stored before that setting existed, the profile's base URL, else the default. */
export function storedKeyBaseUrl(settings: ProfileSettings): string {
  for (const value of [settings.api_key_base_url, settings.base_url]) {
    if (typeof value === 'string' && value) return trimmed(value);
  }
  return DEFAULT_BASE_URL;
}

/** Two spellings of one base URL (case of scheme and host, default port, trailing slash) are the same. */
export function sameBaseUrl(a: string, b: string): boolean {
  const canonical = (url: string) => {
    if (!URL.canParse(url)) return trimmed(url);
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname.replace(/\/+$/, '')}`;
  };
  return canonical(a) === canonical(b);
}

const nonEmpty = (value: string | undefined): string | undefined => (value === '' ? undefined : value);

/**
 * How a key is shown anywhere but its creation: a service key (`fcs_<id>_<secret>`) by `fcs_<id>`, which
 * the service shows too; any other by at most 4 characters and a quarter of it, as gh shows a token
 * (nothing of it is known to be public; 4 still tell `sk-l` from `test`).
 */
export function keyPrefix(key: string): string {
  if (isServiceKey(key)) return key.slice(0, Math.min(12, Math.floor(key.length / 2)));
  return key.slice(0, Math.min(4, Math.floor(key.length / 4)));
}

export const isServiceKey = (key: string): boolean => /^fcs_[A-Za-z0-9]{8}_/.test(key);

export const KEY_SOURCE_LABELS: Record<KeySource, string> = {
  stdin: '--api-key-stdin',
  env: 'FACECTL_API_KEY',
  profile: 'profile',
};

/** One named by the flag or the variable must exist, unless the command `creates` it. */
export async function activeProfile(
  ctx: Pick<Context, 'globals' | 'env' | 'config'>,
  options: { creates?: boolean } = {},
): Promise<string> {
  const named = checkNamedProfile(ctx);
  const store = await ctx.config();
  if (!options.creates) checkExplicitProfile(store, ctx);
  return named ?? store.defaultProfile;
}

/** Refused when no profile can have that name. */
export function checkNamedProfile(ctx: Pick<Context, 'globals' | 'env'>): string | undefined {
  const name = ctx.globals.profile ?? nonEmpty(ctx.env.FACECTL_PROFILE);
  if (name !== undefined) checkProfileName(name, ctx.globals.profile === undefined ? 'FACECTL_PROFILE' : '--profile');
  return name;
}

/** `keys create --save` naming a profile not in the file yet: the credentials used without naming it. */
export async function credentialsBesideNewProfile(sources: CredentialSources): Promise<Credentials | undefined> {
  const name = sources.globals.profile ?? nonEmpty(sources.env.FACECTL_PROFILE);
  if (name === undefined) return undefined;
  const store = await sources.config();
  if (name === store.defaultProfile || store.listProfiles().includes(name)) return undefined;
  const { profile: _named, ...globals } = sources.globals;
  const env = sources.env.FACECTL_PROFILE === name ? { ...sources.env, FACECTL_PROFILE: undefined } : sources.env;
  return resolveCredentials({ ...sources, globals, env });
}

function checkExplicitProfile(store: ConfigStore, ctx: Pick<Context, 'globals' | 'env'>): void {
  const name = checkNamedProfile(ctx);
  if (name === undefined || name === store.defaultProfile) return;
  checkKnownProfile(store, name, ctx.globals.profile === undefined ? `FACECTL_PROFILE=${name}` : '--profile');
}
