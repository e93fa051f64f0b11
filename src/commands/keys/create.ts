import * as z from 'zod';
import type { Column, Context } from '../../context.js';
import { SEED_SCOPE_PATTERN, SEED_SCOPE_RULE } from '../../contract/common.js';
import { type ApiKey, type ApiKeyCreateRequest, createApiKey } from '../../contract/keys.js';
import { cancelledBy, CliError, NetworkError } from '../../errors.js';
import { errorCode } from '../../api/error-mapping.js';
import { daysOption, usdOption } from '../../input/options.js';
import { saveKeyInProfile } from '../auth/save-key.js';
import { parseOptions, requestBody, splitList } from '../kit.js';

/** `facectl keys create`: a new API key; the full secret is shown once, here and nowhere else. */

const list = (flag: string) =>
  z
    .string()
    .transform((value) => splitList(value) ?? [])
    .refine((items) => items.length > 0, { error: `give at least one value (${flag} a,b)` })
    .optional();

const optionsSchema = z.object({
  name: z.string().optional(),
  expiresInDays: daysOption.optional(),
  scopes: list('--scopes').superRefine((items, check) => {
    const bad = items?.find((item) => !SEED_SCOPE_PATTERN.test(item));
    if (bad !== undefined)
      check.addIssue({ code: 'custom', message: `${JSON.stringify(bad)} is not a scope: use ${SEED_SCOPE_RULE}` });
  }),
  budgetUsd: usdOption.optional(),
  allowedFaceIds: list('--allowed-face-ids'),
  allowedLlmModels: list('--allowed-llm-models'),
  save: z.boolean().default(false),
});

export type CreateKeyOptions = z.output<typeof optionsSchema>;

/** What `keys create` uses of the context: the client, the output, and the config for --save. */
type CreateKeyContext = Pick<Context, 'api' | 'out' | 'signal' | 'io' | 'credentials' | 'config'>;

export function parseCreateKeyOptions(raw: Record<string, unknown>): CreateKeyOptions {
  return parseOptions(optionsSchema, raw);
}

export async function createKeyAction(ctx: CreateKeyContext, raw: Record<string, unknown>): Promise<void> {
  await runCreateKey(ctx, parseCreateKeyOptions(raw));
}

const KEY_FIELDS: Column<ApiKey>[] = [
  { header: 'key', value: (k) => k.key },
  { header: 'id', value: (k) => k.id },
  { header: 'name', value: (k) => k.name },
  { header: 'key_prefix', value: (k) => k.key_prefix },
  { header: 'expires_at', value: (k) => k.expires_at ?? 'never' },
  { header: 'scopes', value: (k) => (k as { scopes?: unknown }).scopes },
  { header: 'budget_usd', value: (k) => k.budget_usd ?? 'none' },
  { header: 'allowed_face_ids', value: (k) => k.allowed_face_ids ?? 'any' },
  { header: 'allowed_llm_models', value: (k) => k.allowed_llm_models ?? 'any' },
];

export async function runCreateKey(ctx: CreateKeyContext, opts: CreateKeyOptions): Promise<ApiKey> {
  const { save, ...fields } = opts;
  const body: ApiKeyCreateRequest = requestBody(fields);
  const key = await createUntilAnswered(ctx, body);

  // Print before saving: if the config cannot be written, the secret is still in front of the user.
  ctx.out.record(
    key,
    KEY_FIELDS.filter((field) => field.header !== 'scopes' || 'scopes' in key),
  );
  if (ctx.io.stderrIsTTY) {
    ctx.out.warn('Save this key now: the service keeps only its hash and will not show it again.');
  }
  if (save) await saveKey(ctx, key);
  // Ctrl-C or SIGTERM came while the key was being made: it is shown (and saved), now the exit they ask for.
  if (ctx.signal.aborted) throw cancelledBy(ctx.signal);
  return key;
}

/**
 * Sends the creating request and waits for its answer even past Ctrl-C/SIGTERM (within the HTTP
 * timeouts): the service keeps only the key's hash, so an answer abandoned would leave a live key no one
 * ever saw. A signal before the request is sent ends the command at once.
 */
async function createUntilAnswered(ctx: CreateKeyContext, body: ApiKeyCreateRequest): Promise<ApiKey> {
  // The key is resolved first (--api-key-stdin reads it): a signal meanwhile sends nothing.
  await (await ctx.credentials()).apiKey();
  const api = await ctx.api({ untilAnswered: true });
  if (ctx.signal.aborted) throw cancelledBy(ctx.signal);
  const onSignal = () =>
    ctx.out.warn(
      `${cancelledBy(ctx.signal).message}: waiting for the service's answer to show the new key (it cannot be shown later)`,
    );
  ctx.signal.addEventListener('abort', onSignal, { once: true });
  try {
    return await api.call(createApiKey, { body });
  } catch (error) {
    if (!(error instanceof NetworkError) || NOT_SENT.has(errorCode(error.cause) ?? '')) throw error;
    throw new NetworkError(`${error.message}: a key may have been created on the service`, {
      code: error.code,
      hint: `its secret cannot be shown again (the service keeps only its hash); ${error.hint ?? 'try again'}`,
      cause: error,
    });
  } finally {
    ctx.signal.removeEventListener('abort', onSignal);
  }
}

/** Failures before anything reached the service: no key can have been made. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'FACECTL_PROXY']);

async function saveKey(ctx: Pick<Context, 'out' | 'credentials' | 'config'>, key: ApiKey): Promise<void> {
  try {
    const credentials = await ctx.credentials();
    const config = await ctx.config();
    // The key only works at the service that made it: keep the base URL with it when it came from
    // a flag or the environment rather than from the profile itself. One locked write, read back:
    // "Saved" is printed only once the key is in the file.
    const fromOutside = credentials.baseUrlSource === 'flag' || credentials.baseUrlSource === 'env';
    saveKeyInProfile(ctx, config, credentials.profile, {
      key: key.key,
      baseUrl: credentials.baseUrl,
      ...(fromOutside ? { profileBaseUrl: credentials.baseUrl } : {}),
    });
    ctx.out.info(`Saved key ${key.key_prefix} in profile "${credentials.profile}" (${config.path}).`);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const exitCode = error instanceof CliError ? error.exitCode : 1;
    throw new CliError(`the key was created (shown above) but could not be saved: ${reason}`, exitCode, {
      code: 'save_failed',
      hint: `${error instanceof CliError && error.exitCode !== 0 && error.hint && error.code === 'config_write_failed' ? `${error.hint}; then ` : ''}copy the key from above and run \`facectl auth login\``,
      cause: error,
    });
  }
}
