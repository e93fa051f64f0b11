import type * as z from 'zod/mini';
import type { RouteName } from '../contract/index.js';
import { keepJsonKeys, safeParseJson } from '../contract/json-keys.js';
import type { AnyRoute } from '../contract/route.js';
import { ResponseError } from '../errors.js';

/**
 * How the client reads an answer, more leniently than the contract: a field null, missing or of another
 * type is read as absent (--debug says so), unless a command needs it (NEEDED): then exit 1 naming it.
 */

/** By route (each entry's, for a list): what a command prints for the next one, or decides by. */
export const NEEDED = {
  createApiKey: ['key'],
  createFace: ['alias'],
  getFace: ['alias'],
  createDocument: ['document_id', 'token_count'],
  importIntoFace: ['document_id'],
  createThread: ['thread_id'],
  authorizeOAuth: ['authorize_url'],
  listOAuthConnections: ['provider', 'connected'],
} as const satisfies Partial<Record<RouteName, readonly string[]>>;

/** A value as read where no field is needed: every field of an object may be absent or null, at any depth. */
export type Lenient<T> = Answer<T, never>;

/** An answer as read: the fields named in N are there, of their type; every other field is lenient. */
export type Answer<T, N extends PropertyKey> = T extends readonly (infer E)[]
  ? Answer<E, N>[]
  : T extends object
    ? { [K in keyof T as K extends N ? K : never]-?: NonNullable<T[K]> } & {
        [K in keyof T as K extends N ? never : K]?: Lenient<T[K]> | null;
      }
    : T;

type NeedOf<R extends AnyRoute> = R['name'] extends keyof typeof NEEDED ? (typeof NEEDED)[R['name']][number] : never;

/** What `call(route)` gives a command. */
export type AnswerOf<R extends AnyRoute> = Answer<z.output<R['response']>, NeedOf<R>>;

/** The strict schema first. `neededOnly` (a batch): only the needed fields are read, the rest neither checked nor kept. */
export async function readAnswer(route: AnyRoute, json: unknown, debug?: (line: string) => void, neededOnly = false) {
  const needed: readonly string[] = (NEEDED as Partial<Record<string, readonly string[]>>)[route.name] ?? [];
  const strict = neededOnly ? undefined : safeParseJson(route.response, json);
  if (strict?.success && hasNeeded(strict.data, needed)) return strict.data;
  const { schemaOf } = await (lenient ??= import('./lenient.js'));
  const read = schemaOf(route, needed, neededOnly).safeParse(json);
  const where = `${route.method} ${route.path} (${route.name})`;
  if (!read.success) {
    const issue = read.error.issues[0] as Issue;
    throw new ResponseError(`unexpected response from ${where}: ${deviation(issue, json, route.response)}`, {
      hint: 'the service does not answer as the interface says; run with --debug to see the exchange',
    });
  }
  if (strict === undefined) return read.data;
  if (debug && !strict.success) {
    for (const issue of strict.error.issues)
      debug(`${where}: ${deviation(issue, json, route.response)}; read as absent`);
  }
  return keepJsonKeys(json, read.data);
}

/** lenient.ts, imported once: a batch reads each of its answers through it. */
let lenient: Promise<typeof import('./lenient.js')> | undefined;

function hasNeeded(data: unknown, needed: readonly string[]): boolean {
  const entries = Array.isArray(data) ? data : [data];
  return entries.every((entry) => needed.every((key) => (entry as Record<string, unknown>)[key] !== undefined));
}

type Issue = z.core.$ZodIssue;

/** `field [0].connected_at: expected a date-time string, came null`. */
function deviation(issue: Issue, json: unknown, schema: z.ZodMiniType): string {
  return `field ${fieldPath(issue.path)}: ${issueText(issue, valueAt(json, issue.path), schemaAt(schema, issue.path), 'came')}`;
}

/** `expected <what fits>, <came|got> <what came>`; a rule of the contract keeps its own message. */
export function issueText(issue: Issue, value: unknown, schema: z.ZodMiniType | undefined, came = 'got'): string {
  // zod's default messages start `Invalid`.
  const zodsOwn = /^Invalid\b/.test(issue.message);
  if (!zodsOwn || !['invalid_type', 'invalid_value', 'invalid_format'].includes(issue.code)) return issue.message;
  return `expected ${describeSchema(schema) ?? expectedOf(issue)}, ${came} ${describeValue(value)}`;
}

/** `messages[0].role`; the body itself when the path is empty. */
export function fieldPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(the whole body)';
  return path
    .map((part, i) => (typeof part === 'number' ? `[${part}]` : `${i === 0 ? '' : '.'}${String(part)}`))
    .join('');
}

interface Def {
  type: string;
  format?: string;
  shape?: Record<PropertyKey, z.ZodMiniType>;
  element?: z.ZodMiniType;
  innerType?: z.ZodMiniType;
  entries?: Record<string, unknown>;
}
const defOf = (schema: z.ZodMiniType) => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The schema of the field at `path` (optional, nullable and defaults looked through), if there is one. */
export function schemaAt(schema: z.ZodMiniType, path: readonly PropertyKey[]): z.ZodMiniType | undefined {
  let current: z.ZodMiniType | undefined = unwrapped(schema);
  for (const part of path) {
    const def: Def = defOf(current);
    current = def.type === 'object' ? def.shape?.[part] : def.type === 'array' ? def.element : undefined;
    if (current === undefined) return undefined;
    current = unwrapped(current);
  }
  return current;
}

function unwrapped(schema: z.ZodMiniType): z.ZodMiniType {
  const def = defOf(schema);
  return ['optional', 'nullable', 'default'].includes(def.type) && def.innerType ? unwrapped(def.innerType) : schema;
}

/** What a schema takes, as a message says it (`a date-time string`, `an integer`); undefined for others. */
function describeSchema(schema: z.ZodMiniType | undefined): string | undefined {
  if (schema === undefined) return undefined;
  const def = defOf(schema);
  if (def.type === 'string') return def.format === 'datetime' ? 'a date-time string' : 'a string';
  if (def.type === 'number') return def.format && /int/.test(def.format) ? 'an integer' : 'a number';
  if (def.type === 'boolean') return 'true or false';
  if (def.type === 'enum' && def.entries) return oneOf(Object.values(def.entries));
  if (def.type === 'array') return 'a list';
  if (def.type === 'object' || def.type === 'record') return 'an object';
  return undefined;
}

function expectedOf(issue: Issue): string {
  if (issue.code === 'invalid_type') {
    return issue.expected === 'int'
      ? 'an integer'
      : `${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected}`;
  }
  if (issue.code === 'invalid_format')
    return issue.format === 'datetime' ? 'a date-time string' : `a ${issue.format} string`;
  if (issue.code === 'invalid_value') return oneOf(issue.values);
  return issue.message;
}

const oneOf = (values: readonly unknown[]) => `one of ${values.map((value) => JSON.stringify(value)).join(', ')}`;

export function valueAt(json: unknown, path: readonly PropertyKey[]): unknown {
  let value = json;
  for (const part of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[part];
  }
  return value;
}

/** A value as a message names it: `null`, `nothing (the field is missing)`, `the number 42`, `a string "x"`. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing (the field is missing)';
  if (value === null) return 'null';
  if (Array.isArray(value)) return `a list of ${value.length}`;
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string')
    return `a string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return `the ${typeof value} ${String(value)}`;
}
