import { noPrompt, verb } from '../kit.js';
import {
  activeProfile,
  checkApiKey,
  checkNamedProfile,
  keyPrefix,
  pipeKeyIn,
  sameBaseUrl,
  storedKeyBaseUrl,
} from '../../config/credentials.js';
import type { Context } from '../../context.js';
import { ApiError, AuthError, UsageError } from '../../errors.js';
import { saveKeyInProfile } from './save-key.js';

export default verb({
  description:
    'Store an API key in the active profile after checking it with the service. The key is asked for on a ' +
    'terminal (hidden), or read from standard input with --api-key-stdin; never pass it as an argument. ' +
    '--base-url, when given, is stored with it.\n\n' +
    'A stored key is sent only to the base URL it was saved for. When the service moved (`config set ' +
    'base_url` to its new address), --stored-key checks the key already in the profile at the new base URL ' +
    'and keeps it for that one.',
  flags: {
    storedKey: { help: 'the key stored in the profile: check it at the current base URL and keep it for that URL' },
  },
  examples: [
    'facectl auth login',
    'printenv FACECTL_KEY | facectl auth login --api-key-stdin --base-url https://api.example.com',
    'facectl auth login --stored-key --base-url https://new.example.com --profile work',
  ],
  run: (ctx, given) => runLogin(ctx, given),
});

export async function runLogin(ctx: Context, flags: { storedKey?: boolean } = {}) {
  // A name no profile can have is refused before the key is asked for or checked with the service.
  checkNamedProfile(ctx);
  // A config file that cannot be saved into (a symlink, another user's) is refused before the key is checked.
  await (await ctx.config()).checkWritable();
  const creds = await ctx.credentials();
  const stored = flags.storedKey ? await storedKey(ctx) : undefined;
  const key = stored?.key ?? (await obtainKey(ctx, creds.baseUrl));

  // Check the key before storing it: a typo should fail now, not at the next command.
  const [{ clientForContext }, { getCurrentApiKey }] = await Promise.all([
    import('../../api/context-client.js'),
    import('../../contract/keys.js'),
  ]);
  const client = clientForContext(ctx, { baseUrl: creds.baseUrl, apiKey: key });
  const spinner = ctx.out.spinner(`Checking the key with ${creds.baseUrl}`);
  const current = await client
    .call(getCurrentApiKey, {})
    .catch((error: unknown) => {
      if (!(error instanceof ApiError) || error.status !== 401) throw error;
      throw new AuthError(`${creds.baseUrl} refused this API key; nothing was stored`, {
        hint: 'check that the key was copied whole, and that --base-url points at the service that issued it',
      });
    })
    .finally(() => {
      spinner.stop();
      return client.close();
    });

  const store = await ctx.config();
  const profile = await activeProfile(ctx, { creates: true });
  // The key is kept for the base URL it was checked at; one from a flag or the environment becomes the profile's.
  const fromOutside = creds.baseUrlSource === 'flag' || creds.baseUrlSource === 'env';
  const previous = store.getProfile(profile).base_url;
  await saveKeyInProfile(ctx, store, profile, key, creds.baseUrl, fromOutside);

  const result = {
    profile,
    base_url: creds.baseUrl,
    key_prefix: keyPrefix(key),
    plan: current.plan ?? null,
    scopes: current.scopes ?? null,
    expires_at: current.expires_at ?? null,
    config_file: store.path,
  };
  if (ctx.out.json) ctx.out.record(result, undefined, `the key was saved in profile ${profile} all the same`);
  else {
    ctx.out.success(
      `Logged in to ${creds.baseUrl} with key ${result.key_prefix}… (profile ${profile}${result.plan ? `, ${result.plan} plan` : ''})`,
    );
    if (!ctx.io.stderrIsTTY) ctx.out.info(`stored key ${result.key_prefix}… in profile ${profile}`);
  }
  if (fromOutside && typeof previous === 'string' && previous && !sameBaseUrl(previous, creds.baseUrl)) {
    ctx.out.info(`profile ${profile} now uses ${creds.baseUrl} (its base_url was ${previous})`);
  }
  if (stored && !sameBaseUrl(stored.savedFor, creds.baseUrl)) {
    ctx.out.info(
      `the key of profile ${profile} is now kept for ${creds.baseUrl} (it was saved for ${stored.savedFor})`,
    );
  }
  return result;
}

/** --stored-key: the key the active profile holds (whatever base URL it was saved for), and that URL. */
async function storedKey(ctx: Context): Promise<{ key: string; savedFor: string }> {
  if (ctx.globals.apiKeyStdin) {
    throw new UsageError('--stored-key and --api-key-stdin both give the key: choose one', {
      hint: '--stored-key keeps the key the profile holds; --api-key-stdin stores the one piped in',
    });
  }
  const profile = await activeProfile(ctx);
  const settings = (await ctx.config()).getProfile(profile);
  if (typeof settings.api_key !== 'string' || settings.api_key === '') {
    throw new UsageError(`--stored-key: profile ${profile} has no stored key`, {
      hint: `run \`facectl auth login --profile ${profile}\` to store one`,
    });
  }
  return { key: checkApiKey(settings.api_key, 'profile'), savedFor: storedKeyBaseUrl(settings) };
}

async function obtainKey(ctx: Context, baseUrl: string): Promise<string> {
  if (ctx.globals.apiKeyStdin) {
    const found = await (await ctx.credentials()).apiKey();
    if (!found) throw new UsageError('--api-key-stdin: standard input held no key');
    return found.key;
  }
  if (!ctx.io.canPrompt()) {
    // Why nothing was asked: on a terminal with stdout piped, "asks for it on a terminal" alone misled a ring.
    const why = noPrompt(ctx);
    throw new UsageError(
      `no API key given: \`auth login\` asks for it on a terminal, or reads it with --api-key-stdin (${why})`,
      {
        hint: `pipe the key in: \`${pipeKeyIn(ctx.env)}\``,
      },
    );
  }
  // A service that cannot be reached is said before the key is pasted (and pasted again once the URL is fixed).
  const { probeService } = await import('../doctor/network-checks.js');
  const { error } = await probeService(ctx, new URL(baseUrl), undefined);
  if (error) throw error;
  const answer = await ctx.prompter.password({ message: 'Paste your API key:' });
  return checkApiKey(answer, 'prompt');
}
