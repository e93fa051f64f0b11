import type { Context } from '../../context.js';
import type { AnswerOf } from '../../api/answers.js';
import type { FaceCreateRequest } from '../../contract/faces.js';
import { ApiError } from '../../errors.js';
import { checkAlias, notEmpty, requestBody, requireValues, send, verb } from '../kit.js';
import type { Flags, FlagValues } from '../verb.js';
import { FACE_FIELDS, showFaceWarnings } from './get.js';

const flags = {
  name: { value: '<name>', help: 'display name', check: notEmpty },
  alias: {
    value: '<alias>',
    help: "the face's unique alias, a slug (facectl serve's rule: lower-case letters, digits and single hyphens, 3 to 64 characters)",
    check: checkAlias,
  },
  basicFacts: { value: '<json>', help: 'a JSON object: inline, @FILE to read a file, or - to read standard input' },
  defaultTools: { value: '<tools>', type: 'list', help: 'comma-separated tool names' },
  defaultModel: { value: '<model>', help: 'default language model', check: notEmpty },
  formula: { value: '<formula>', help: 'the formula of the face' },
} as const satisfies Flags;

export default verb({
  description: 'Create a face. On a terminal, a missing --name or --alias is asked for.',
  flags,
  examples: [
    'facectl faces create --name "Ada Lovelace" --alias ada-lovelace',
    `facectl faces create --name Ada --alias ada --basic-facts '{"born": 1815}' --default-tools search,calc`,
    'cat facts.json | facectl faces create --name Ada --alias ada --basic-facts - --json --no-input',
  ],
  async run(ctx, given) {
    // --basic-facts is read first: bad input is refused before anything is asked.
    const { readJsonObjectFlag } = await import('../../input/json-flag.js');
    const basicFacts =
      given.basicFacts === undefined ? undefined : await readJsonObjectFlag(ctx, '--basic-facts', given.basicFacts);
    const [name, alias] = await requireValues(ctx, [
      { flag: '--name', value: given.name, message: 'Display name of the face' },
      { flag: '--alias', value: given.alias, message: ALIAS_PROMPT, check: checkAlias },
    ]);
    // An alias typed at the prompt that the service refuses is asked again with the reason; --alias is the script's.
    const askAgain = async (reason: string) => {
      ctx.out.info(`The service refused that alias: ${reason}`, { immediate: true });
      return ctx.prompter.input({ message: ALIAS_PROMPT, validate: (text) => checkAlias(text) ?? true });
    };
    await runCreateFace(ctx, { ...given, name, alias, basicFacts }, given.alias ? undefined : askAgain);
  },
});

const ALIAS_PROMPT = 'Alias (a slug such as ada-lovelace)';

export async function runCreateFace(
  ctx: Context,
  opts: Omit<FlagValues<typeof flags>, 'basicFacts'> & {
    name: string;
    alias: string;
    basicFacts?: Record<string, unknown>;
  },
  askAlias?: (reason: string) => Promise<string>,
) {
  const { createFace } = await import('../../contract/faces.js');
  const post = (alias: string): Promise<AnswerOf<typeof createFace>> => {
    const body: FaceCreateRequest = requestBody({ ...opts, alias });
    return send(ctx, createFace, { body }).catch(async (error: unknown) => {
      const reason = askAlias ? aliasRefusal(error) : undefined;
      if (reason === undefined || !askAlias) throw error;
      return post(await askAlias(reason));
    });
  };
  const face = await post(opts.alias);
  const made = face.uid ? `${face.alias} (${face.uid})` : face.alias;
  ctx.out.record(face, FACE_FIELDS, `the face was created all the same: ${made} (\`facectl faces get ${face.alias}\`)`);
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
