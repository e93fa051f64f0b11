import * as z from 'zod';
import type { Context } from '../../context.js';
import { createFace, type Face, type FaceCreateRequest } from '../../contract/faces.js';
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
    message: 'Alias (a slug such as ada-lovelace)',
    validate: checkAlias,
  });
  return { ...flags, name, alias, basicFacts };
}

export async function createFaceAction(ctx: Context, raw: Record<string, unknown>): Promise<void> {
  await runCreateFace(ctx, await resolveCreateFaceOptions(ctx, raw));
}

export async function runCreateFace(ctx: RequestContext, opts: CreateFaceOptions): Promise<Face> {
  const body: FaceCreateRequest = requestBody(opts);
  const face = await send(ctx, createFace, { body });
  ctx.out.record(face, FACE_FIELDS);
  showFaceWarnings(ctx, face);
  ctx.out.success(`Created face ${face.alias}${face.uid ? ` (${face.uid})` : ''}`);
  return face;
}
