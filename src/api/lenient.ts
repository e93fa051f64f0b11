import * as z from 'zod';
import type { AnyRoute } from '../contract/route.js';
import { ResponseError } from '../errors.js';

/**
 * The lenient reading of an answer that deviates from its route's response schema (see answers.ts),
 * derived from that schema: every field of every object may be null or missing, and one of another type
 * is read as absent, but the fields the route needs, which must be there and of their type.
 */
export function readLeniently(
  route: AnyRoute,
  json: unknown,
  needed: readonly string[],
  deviations: readonly z.core.$ZodIssue[],
  debug?: (line: string) => void,
): unknown {
  const where = `${route.method} ${route.path} (${route.name})`;
  const read = lenientSchemaOf(route, needed).safeParse(json);
  if (!read.success) {
    const issue = read.error.issues[0] as z.core.$ZodIssue;
    throw new ResponseError(`unexpected response from ${where}: ${deviationOf(issue, json, route.response)}`, {
      hint: 'the service does not answer as the interface says; run with --debug to see the exchange',
    });
  }
  for (const issue of deviations) debug?.(`${where}: ${deviationOf(issue, json, route.response)}; read as absent`);
  return read.data;
}

const LENIENT = new WeakMap<AnyRoute, z.ZodType>();

function lenientSchemaOf(route: AnyRoute, needed: readonly string[]): z.ZodType {
  let schema = LENIENT.get(route);
  if (!schema) {
    schema = lenientOf(route.response, new Set(needed));
    LENIENT.set(route, schema);
  }
  return schema;
}

/**
 * `schema` with every object field lenient but those in `needed`, which apply at the top, or to each
 * entry of a top-level list: such a field is required and of its type, whatever the interface says.
 */
function lenientOf(schema: z.ZodType, needed: ReadonlySet<string> = new Set()): z.ZodType {
  if (schema instanceof z.ZodArray) return z.array(lenientOf(schema.element as z.ZodType, needed));
  if (schema instanceof z.ZodObject) {
    const shape: Record<string, z.ZodType> = {};
    for (const [key, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
      shape[key] = needed.has(key) ? lenientOf(required(field)) : lenientField(field);
    }
    return schema.extend(shape);
  }
  if (schema instanceof z.ZodOptional) return lenientOf(schema.unwrap() as z.ZodType).optional();
  if (schema instanceof z.ZodNullable) return lenientOf(schema.unwrap() as z.ZodType).nullable();
  return schema;
}

/** A field that need not be there: null stays null, missing stays missing, another type is read as absent. */
function lenientField(field: z.ZodType): z.ZodType {
  return lenientOf(field).nullable().optional().catch(undefined);
}

/** A needed field: present and not null, even where the interface has it optional or nullable. */
function required(field: z.ZodType): z.ZodType {
  if (field instanceof z.ZodOptional || field instanceof z.ZodNullable) return required(field.unwrap() as z.ZodType);
  return field;
}

/** `field [0].connected_at: expected a date-time string, came null`. */
export function deviationOf(issue: z.core.$ZodIssue, json: unknown, schema: z.ZodType): string {
  const expected = describeSchema(schemaAt(schema, issue.path)) ?? expectedOf(issue);
  return `field ${fieldPath(issue.path)}: expected ${expected}, came ${describeValue(valueAt(json, issue.path))}`;
}

/** The schema of the field at `path` (optional, nullable and defaults looked through), if there is one. */
function schemaAt(schema: z.ZodType, path: readonly PropertyKey[]): z.ZodType | undefined {
  let current: z.ZodType | undefined = unwrapped(schema);
  for (const part of path) {
    if (current instanceof z.ZodObject) current = (current.shape as Record<PropertyKey, z.ZodType>)[part];
    else if (current instanceof z.ZodArray) current = current.element as z.ZodType;
    else return undefined;
    current = current && unwrapped(current);
  }
  return current;
}

function unwrapped(schema: z.ZodType): z.ZodType {
  const inner = (schema as unknown as { _zod: { def: { innerType?: z.ZodType } } })._zod.def.innerType;
  return schema instanceof z.ZodOptional || schema instanceof z.ZodNullable || schema instanceof z.ZodDefault
    ? unwrapped(inner as z.ZodType)
    : schema;
}

/** What a schema takes, as a message says it (`a date-time string`, `an integer`); undefined for others. */
function describeSchema(schema: z.ZodType | undefined): string | undefined {
  if (schema === undefined) return undefined;
  const def = (schema as unknown as { _zod: { def: { type: string; format?: string } } })._zod.def;
  if (def.type === 'string') return def.format === 'datetime' ? 'a date-time string' : 'a string';
  if (def.type === 'number') return def.format && /int/.test(def.format) ? 'an integer' : 'a number';
  if (def.type === 'boolean') return 'true or false';
  if (schema instanceof z.ZodEnum) return `one of ${schema.options.map((value) => JSON.stringify(value)).join(', ')}`;
  if (def.type === 'array') return 'a list';
  if (def.type === 'object' || def.type === 'record') return 'an object';
  return undefined;
}

/** `messages[0].role`; the body itself when the path is empty. */
export function fieldPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(the whole body)';
  return path
    .map((part, i) => (typeof part === 'number' ? `[${part}]` : `${i === 0 ? '' : '.'}${String(part)}`))
    .join('');
}

function expectedOf(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return issue.expected === 'int'
        ? 'an integer'
        : `${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected}`;
    case 'invalid_format':
      return issue.format === 'datetime' ? 'a date-time string' : `a ${issue.format} string`;
    case 'invalid_value':
      return `one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}`;
    default:
      return issue.message;
  }
}

function valueAt(json: unknown, path: readonly PropertyKey[]): unknown {
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
