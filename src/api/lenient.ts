import * as z from 'zod/mini';
import type { AnyRoute } from '../contract/route.js';

/**
 * The lenient schema of a route's answer (answers.ts): every field may be null or missing, one of another
 * type is read as absent, but for the needed ones. Made once per route, for an answer that deviated.
 */
export function lenientSchemaOf(route: AnyRoute, needed: readonly string[]): z.ZodMiniType {
  let schema = LENIENT.get(route);
  if (!schema) LENIENT.set(route, (schema = lenientOf(route.response, new Set(needed))));
  return schema;
}

const LENIENT = new WeakMap<AnyRoute, z.ZodMiniType>();

/** The needed fields alone of a route answering an object (`neededOnly`), made once per route. */
export function neededSchemaOf(route: AnyRoute, needed: readonly string[]): z.ZodMiniType {
  let schema = NEEDED_ONLY.get(route);
  if (!schema) {
    const shape = (route.response as z.ZodMiniObject).shape as Record<string, z.ZodMiniType>;
    schema = z.object(Object.fromEntries(needed.map((key) => [key, required(shape[key] as z.ZodMiniType)])));
    NEEDED_ONLY.set(route, schema);
  }
  return schema;
}

const NEEDED_ONLY = new WeakMap<AnyRoute, z.ZodMiniType>();

/** `needed` applies at the top, or to each entry of a top-level list; deeper objects need nothing. */
function lenientOf(schema: z.ZodMiniType, needed: ReadonlySet<string> = new Set()): z.ZodMiniType {
  if (schema instanceof z.ZodMiniArray) return z.array(lenientOf(schema._zod.def.element as z.ZodMiniType, needed));
  if (schema instanceof z.ZodMiniObject) {
    const shape: Record<string, z.ZodMiniType> = {};
    for (const [key, field] of Object.entries(schema.shape as Record<string, z.ZodMiniType>)) {
      shape[key] = needed.has(key) ? lenientOf(required(field)) : lenientField(field);
    }
    return z.extend(schema, shape);
  }
  if (schema instanceof z.ZodMiniOptional) return z.optional(lenientOf(innerOf(schema)));
  if (schema instanceof z.ZodMiniNullable) return z.nullable(lenientOf(innerOf(schema)));
  return schema;
}

/** A field that need not be there: null stays null, missing stays missing, another type is read as absent. */
function lenientField(field: z.ZodMiniType): z.ZodMiniType {
  return z.catch(z.optional(z.nullable(lenientOf(field))), undefined);
}

/** A needed field: present and not null, even where the interface has it optional or nullable. */
function required(field: z.ZodMiniType): z.ZodMiniType {
  if (field instanceof z.ZodMiniOptional || field instanceof z.ZodMiniNullable) return required(innerOf(field));
  return field;
}

function innerOf(schema: z.ZodMiniOptional | z.ZodMiniNullable): z.ZodMiniType {
  return schema._zod.def.innerType as z.ZodMiniType;
}
