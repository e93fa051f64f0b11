import * as z from 'zod/mini';
import type { AnyRoute } from '../contract/route.js';

/** The schema of an answer that deviated (answers.ts), made once per route: lenient, or the needed fields alone. */
export function schemaOf(route: AnyRoute, needed: readonly string[], neededOnly: boolean): z.ZodMiniType {
  const made = neededOnly ? NEEDED_ONLY : LENIENT;
  let schema = made.get(route);
  if (schema) return schema;
  const shape = (route.response as z.ZodMiniObject).shape as Record<string, z.ZodMiniType>;
  schema = neededOnly
    ? z.object(Object.fromEntries(needed.map((key) => [key, required(shape[key] as z.ZodMiniType)])))
    : lenientOf(route.response, new Set(needed));
  made.set(route, schema);
  return schema;
}

const LENIENT = new WeakMap<AnyRoute, z.ZodMiniType>();
const NEEDED_ONLY = new WeakMap<AnyRoute, z.ZodMiniType>();

/** `needed` applies at the top, or to each entry of a top-level list; deeper objects need nothing. */
function lenientOf(schema: z.ZodMiniType, needed: ReadonlySet<string> = new Set()): z.ZodMiniType {
  if (schema instanceof z.ZodMiniArray) return z.array(lenientOf(schema._zod.def.element as z.ZodMiniType, needed));
  if (schema instanceof z.ZodMiniObject) {
    const shape: Record<string, z.ZodMiniType> = {};
    // A field not needed: null stays null, missing stays missing, another type is read as absent.
    for (const [key, field] of Object.entries(schema.shape as Record<string, z.ZodMiniType>)) {
      shape[key] = needed.has(key)
        ? lenientOf(required(field))
        : z.catch(z.optional(z.nullable(lenientOf(field))), undefined);
    }
    return z.extend(schema, shape);
  }
  if (schema instanceof z.ZodMiniOptional) return z.optional(lenientOf(innerOf(schema)));
  if (schema instanceof z.ZodMiniNullable) return z.nullable(lenientOf(innerOf(schema)));
  return schema;
}

/** A needed field: present and not null, even where the interface has it optional or nullable. */
function required(field: z.ZodMiniType): z.ZodMiniType {
  if (field instanceof z.ZodMiniOptional || field instanceof z.ZodMiniNullable) return required(innerOf(field));
  return field;
}

const innerOf = (schema: z.ZodMiniOptional | z.ZodMiniNullable) => schema._zod.def.innerType as z.ZodMiniType;
