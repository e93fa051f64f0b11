import {
  checkApiKey,
  checkNamedProfile,
  credentialsBesideNewProfile,
  KEY_SOURCE_LABELS,
  keyPrefix,
} from '../../config/credentials.js';
import type { Column, Context } from '../../context.js';
import type { Lenient } from '../../api/answers.js';
import type { ApiKey, ApiKeyCreateRequest } from '../../contract/keys.js';
import { SCOPE_ACTIONS, SCOPE_AREAS, SEED_SCOPE_PATTERN, SEED_SCOPE_RULE } from '../../contract/values.js';
import {
  cancelledBy,
  CliError,
  DeclinedError,
  ExitCode,
  NetworkError,
  OUTPUT_CLOSED,
  OUTPUT_FAILED,
  UsageError,
} from '../../errors.js';
import { saveKeyInProfile } from '../auth/save-key.js';
import { fieldColumns, noPrompt, requestBody, verb } from '../kit.js';
import type { Flags, FlagValues } from '../verb.js';

const flags = {
  name: { value: '<name>', help: 'a label for the key' },
  expiresInDays: {
    value: '<days>',
    type: 'int',
    unit: 'days',
    help: "lifetime in days (facectl serve's rule: 1 to 365; left out, that of the creating key)",
  },
  scopes: {
    value: '<scopes>',
    type: 'list',
    min: 1,
    help:
      'comma-separated scopes, each of the form v1:* (facectl serve reads v1:*, v1:<area> or ' +
      'v1:<area>:<read|write>, with areas keys, faces, compile, oauth)',
    // Whole, as the check wants them (`v1:*` is left out: a shell would read its star as a file pattern).
    suggest: SCOPE_AREAS.flatMap((area) => [`v1:${area}`, ...SCOPE_ACTIONS.map((action) => `v1:${area}:${action}`)]),
    check: (scope) =>
      SEED_SCOPE_PATTERN.test(scope) ? undefined : `${JSON.stringify(scope)} is not a scope: use ${SEED_SCOPE_RULE}`,
  },
  budgetUsd: { value: '<usd>', type: 'usd', help: 'spending budget in US dollars (0 or more)' },
  allowedFaceIds: { value: '<ids>', type: 'list', min: 1, help: 'comma-separated face ids the key may use' },
  allowedLlmModels: {
    value: '<models>',
    type: 'list',
    min: 1,
    help: 'comma-separated language models the key may use',
  },
  save: {
    help:
      'store the new key in the active profile (it then authenticates later commands), asking first if that ' +
      "replaces a stored key. It is made with that profile's key; --profile NEW creates NEW and makes it with " +
      'the key used without --profile',
  },
  yes: { short: '-y', help: "with --save, replace the profile's stored key without asking" },
} as const satisfies Flags;

export default verb({
  summary: 'Create an API key (the secret is shown once)',
  description:
    'Create an API key. The full secret is printed once, now; the service keeps only its hash.\n\n' +
    "What a field left out means is the service's to say (facectl serve: it is inherited from the key " +
    'making the request, and a key cannot create a wider one).',
  flags,
  examples: [
    'facectl keys create --name ci --expires-in-days 30 --scopes v1:compile --budget-usd 5',
    'facectl keys create --name laptop --save --profile laptop',
    'facectl keys create --name laptop --save --yes',
    'facectl keys create --json --no-input --scopes v1:faces:read | jq -r .key',
  ],
  run: (ctx, given) => runCreateKey(ctx, given),
});

const KEY_FIELDS: Column<Lenient<ApiKey>>[] = [
  ...fieldColumns<Lenient<ApiKey>>('key', 'id', 'name', 'key_prefix'),
  { header: 'expires_at', value: (k) => k.expires_at ?? 'never' },
  { header: 'scopes', value: (k) => (k as { scopes?: unknown }).scopes },
  { header: 'budget_usd', value: (k) => k.budget_usd ?? 'unlimited' },
  { header: 'allowed_face_ids', value: (k) => k.allowed_face_ids ?? 'any' },
  { header: 'allowed_llm_models', value: (k) => k.allowed_llm_models ?? 'any' },
];

export async function runCreateKey(ctx: Context, opts: FlagValues<typeof flags>) {
  const { save, yes, ...fields } = opts;
  const body: ApiKeyCreateRequest = requestBody(fields);
  // A profile or config file that cannot be saved into is refused now, not after a live key was made.
  if (save) {
    checkNamedProfile(ctx);
    await (await ctx.config()).checkWritable();
  }
  const { createApiKey } = await import('../../contract/keys.js');
  const active = await ctx.credentials();
  // A stored key replaced is kept nowhere: asked before anything is sent (the warning after is decided under the lock).
  const held = save ? (await ctx.config()).getProfile(active.profile).api_key : undefined;
  if (typeof held === 'string' && held !== '' && !yes) {
    const what = `the key stored in profile ${active.profile} (${keyPrefix(held)}…)`;
    if (!ctx.io.canPrompt()) {
      throw new UsageError(`--yes is required to replace ${what} when not running interactively (${noPrompt(ctx)})`, {
        hint: 'to keep both, save the new key in a new profile: give --profile a name no profile has yet; or add `--yes` to replace it',
      });
    }
    if (!(await ctx.prompter.confirm({ message: `Replace ${what}? It is not kept anywhere else.`, default: false }))) {
      throw new DeclinedError(
        `Not replaced: profile ${active.profile} still holds key ${keyPrefix(held)}…; no key was created ` +
          '(to keep both, run it again giving --profile a name no profile has yet)',
      );
    }
  }
  // --save into a new profile (`--profile laptop`) makes the key with what is used without naming one (its base URL).
  const beside = save
    ? await credentialsBesideNewProfile({ ...ctx, stdin: ctx.io.stdin, stdinIsTTY: ctx.io.stdinIsTTY })
    : undefined;
  // The key is resolved first (--api-key-stdin reads it): a signal meanwhile sends nothing.
  const found = await (beside ?? active).apiKey();
  if (beside && found) {
    const from =
      found.source === 'profile' ? `of profile "${beside.profile}"` : `from ${KEY_SOURCE_LABELS[found.source]}`;
    ctx.out.info(
      `profile "${active.profile}" does not exist yet: creating the key with key ${keyPrefix(found.key)}… ${from} ` +
        `at ${beside.baseUrl}, then saving it in a new profile "${active.profile}"`,
    );
  }
  // Waited for past Ctrl-C/SIGTERM (a client without the signal): an abandoned answer would lose a live key.
  const api = beside
    ? (await import('../../api/context-client.js')).clientForContext(
        ctx,
        {
          baseUrl: beside.baseUrl,
          apiKey: async () => found,
          noKeyMessage: `not logged in: ${beside.describe()}`,
        },
        { signal: undefined },
      )
    : await ctx.api({ untilAnswered: true });
  if (ctx.signal.aborted) throw cancelledBy(ctx.signal);
  const onSignal = () =>
    ctx.out.warn(
      `${cancelledBy(ctx.signal).message}: waiting for the service's answer to show the new key (it cannot be shown later)`,
    );
  ctx.signal.addEventListener('abort', onSignal, { once: true });
  const key = await api
    .call(createApiKey, { body })
    .catch((error: unknown) => {
      if (!(error instanceof NetworkError) || error.unsent) throw error;
      throw new NetworkError(`${error.message}: a key may have been created on the service`, {
        code: error.code,
        hint: `its secret cannot be shown again (the service keeps only its hash); ${error.hint ?? 'try again'}`,
        cause: error,
      });
    })
    .finally(() => {
      ctx.signal.removeEventListener('abort', onSignal);
      return beside && api.close();
    });

  // Print before saving: if the config cannot be written, the secret is still in front of the user.
  let filterFailed: CliError | undefined;
  const shown = KEY_FIELDS.filter((field) => field.header !== 'scopes' || 'scopes' in key);
  try {
    ctx.out.record(key, shown);
  } catch (error) {
    if (!(error instanceof CliError) || error.code !== 'jq_error') throw error;
    // The secret is shown only now: a filter that failed on the answer leaves it whole instead.
    ctx.io.stdout.write(`${JSON.stringify(key)}\n`);
    filterFailed = new CliError(error.message, error.exitCode, {
      code: error.code,
      hint: 'the key was created: its whole answer is printed instead, as its secret is shown only now',
    });
  }
  // With --save the key is kept (or the failure to keep it says to copy it from above).
  const expression = save || filterFailed ? undefined : ctx.globals.jq;
  const jq = expression === undefined ? undefined : await import('../../io/jq.js');
  if (jq && !(await jq.jqShows(expression as string, key, key.key))) {
    ctx.out.warn(`${jq.SECRET_LEFT_OUT} (--save keeps it)`);
  } else if (ctx.io.stderrIsTTY && !save) {
    ctx.out.warn('Save this key now: the service keeps only its hash and will not show it again.');
  }
  // The secret exists only in that output: a failed write (closed pipe, full disk) is known a tick later.
  await new Promise((resolve) => setImmediate(resolve));
  const unwritten = ctx.signal.reason as CliError | undefined;
  if (!save && ctx.signal.aborted && (unwritten?.code === OUTPUT_CLOSED || unwritten?.code === OUTPUT_FAILED)) {
    const closed = unwritten.code === OUTPUT_CLOSED;
    const why = closed ? 'standard output was closed' : unwritten.message;
    throw new CliError(
      `key ${key.id ?? ''} was created, but its secret could not be written: ${why}`,
      closed ? ExitCode.outputClosed : ExitCode.error,
      {
        code: 'key_not_shown',
        hint: 'the service will not show it again: create another key, with its output going where it is kept, or with --save',
      },
    );
  }
  // The key works only where it was made: that base URL becomes the profile's if it came from outside (or is new).
  // One locked write, read back: "Saved" is printed only once the key is in the file.
  if (save) {
    const { profile } = active;
    // A key the client would refuse to send is not stored: the profile would say "not logged in" from then on.
    try {
      checkApiKey(key.key, 'answer');
    } catch (error) {
      throw new CliError(
        `the key was created (shown above) but not saved: ${(error as Error).message}`,
        ExitCode.error,
        {
          code: 'save_failed',
          hint: 'the configuration is unchanged; run with --debug to see the exchange',
          cause: error,
        },
      );
    }
    const fromOutside = beside !== undefined || active.baseUrlSource === 'flag' || active.baseUrlSource === 'env';
    // Without --yes, only the key asked about (none: an empty profile) is replaced, not one stored meanwhile.
    const agreed = yes ? undefined : typeof held === 'string' ? held : '';
    let other: string | undefined;
    try {
      const config = await ctx.config();
      const baseUrl = (beside ?? active).baseUrl;
      other = await saveKeyInProfile(ctx, config, profile, key.key, baseUrl, fromOutside, agreed);
      if (other === undefined)
        ctx.out.info(`Saved key ${keyPrefix(key.key)}… in profile "${profile}" (${config.path}).`);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      // Exit 1 whatever the cause: a key was made (2 would say nothing was sent).
      throw new CliError(`the key was created (shown above) but could not be saved: ${reason}`, ExitCode.error, {
        code: 'save_failed',
        hint: `${error instanceof CliError && error.exitCode !== 0 && error.hint && error.code === 'config_write_failed' ? `${error.hint}; then ` : ''}copy the key from above and run \`facectl auth login\``,
        cause: error,
      });
    }
    if (other !== undefined) {
      throw new CliError(
        `the key was created (shown above) but not saved: profile ${profile} now holds another key ` +
          `(${keyPrefix(other)}…), stored meanwhile, which was not replaced`,
        ExitCode.error,
        {
          code: 'save_failed',
          hint:
            `copy the key from above into \`facectl auth login --profile <new-name>\` to keep both (a name no profile has ` +
            `yet), or into \`facectl auth login --profile ${profile}\` to replace the other (\`keys create --save --yes\` replaces without asking)`,
        },
      );
    }
  }
  // Ctrl-C or SIGTERM came while the key was being made: it is shown (and saved), now the exit they ask for.
  if (ctx.signal.aborted) throw cancelledBy(ctx.signal);
  if (filterFailed) throw filterFailed;
  return key;
}
