import * as z from 'zod';
import type { Context } from '../../context.js';
import { createFace, type Face, type FaceCreateRequest } from '../../contract/faces.js';
import { ApiError } from '../../errors.js';
import { readJsonObjectFlag } from '../../input/json-flag.js';
import { aliasOption, checkAlias, nonEmptyOption } from '../../input/options.js';
import { parseOptions, type RequestContext, requestBody, requireValue, send, splitList } from '../kit.js';
import { FACE_FIELDS, showFaceWarnings } from './fields.js';

/** `facectl faces create`: a new face; name and alias are asked for on a terminal when not given. */

const optionsSchema = z.object({
  name: nonEmptyOption.optional(),
  alias: aliasOption.optional(),
  basicFacts: z.string().optional(),
  defaultTools: z
    .string()
    .transform((value) => splitList(value) ?? [])
    .optional(),
  defaultModel: nonEmptyOption.optional(),
  formula: z.string().optional(),
});

/** The flags once resolved: name and alias given or asked for, --basic-facts read as a JSON object. */
export type CreateFaceOptions = Omit<z.output<typeof optionsSchema>, 'name' | 'alias' | 'basicFacts'> & {
  name: string;
  alias: string;
  basicFacts?: Record<string, unknown> | undefined;
};

/**
 * Flags first (a bad value is refused before anything else happens), then the --basic-facts input,
 * then prompts for what is still missing.
 */
export async function resolveCreateFaceOptions(ctx: Context, raw: Record<string, unknown>): Promise<CreateFaceOptions> {
  const flags = parseOptions(optionsSchema, raw);
  const basicFacts =
    flags.basicFacts === undefined ? undefined : await readJsonObjectFlag(ctx, '--basic-facts', flags.basicFacts);
  const name = await requireValue(ctx, { flag: '--name', value: flags.name, message: 'Display name of the face' });
  const alias = await requireValue(ctx, {
    flag: '--alias',
    value: flags.alias,
    message: ALIAS_PROMPT,
    validate: checkAlias,
  });
  return { ...flags, name, alias, basicFacts };
}

const ALIAS_PROMPT = 'Alias (a slug such as ada-lovelace)';

export async function createFaceAction(ctx: Context, raw: Record<string, unknown>): Promise<void> {
  const opts = await resolveCreateFaceOptions(ctx, raw);
  // An alias typed at the prompt that the service refuses (its slug rule, or taken) is asked for again
  // with the reason; one given as --alias is the script's to fix (exit 2 or 5).
  const aliasWasAsked = raw.alias === undefined || raw.alias === '';
  await runCreateFace(ctx, opts, aliasWasAsked ? (reason) => askAliasAgain(ctx, reason) : undefined);
}

/** Says why the service refused the alias typed, and asks for another. */
async function askAliasAgain(ctx: Context, reason: string): Promise<string> {
  ctx.out.info(`The service refused that alias: ${reason}`, { immediate: true });
  return ctx.prompter.input({ message: ALIAS_PROMPT, validate: checkAlias });
}

export async function runCreateFace(
  ctx: RequestContext,
  opts: CreateFaceOptions,
  askAlias?: (reason: string) => Promise<string>,
): Promise<Face> {
  let face: Face;
  for (let alias = opts.alias; ;) {
    try {
      const body: FaceCreateRequest = requestBody({ ...opts, alias });
      face = await send(ctx, createFace, { body });
      break;
    } catch (error) {
      const reason = askAlias ? aliasRefusal(error) : undefined;
      if (reason === undefined || !askAlias) throw error;
      alias = await askAlias(reason);
    }
  }
  ctx.out.record(face, FACE_FIELDS);
  showFaceWarnings(ctx, face);
  ctx.out.success(`Created face ${face.alias}${face.uid ? ` (${face.uid})` : ''}`);
  return face;
}

/** Why the service refused the alias: a 422 whose field errors name `alias`, or 409 alias_taken. */
function aliasRefusal(error: unknown): string | undefined {
  if (!(error instanceof ApiError)) return undefined;
  if (error.status === 409 && error.code === 'alias_taken') return error.message;
  if (error.status !== 422 || !Array.isArray(error.detail)) return undefined;
  const aboutAlias = (error.detail as { loc?: unknown; msg?: unknown }[]).filter(
    (item) => Array.isArray(item?.loc) && item.loc.at(-1) === 'alias' && typeof item.msg === 'string',
  );
  // Only when the alias is all that is wrong: another field's error is not fixed by asking again.
  if (aboutAlias.length === 0 || aboutAlias.length !== error.detail.length) return undefined;
  return aboutAlias.map((item) => item.msg as string).join('; ');
}
