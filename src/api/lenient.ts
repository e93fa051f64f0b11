import * as z from 'zod';
import type { AnyRoute } from '../contract/route.js';

/**
 * The lenient schema of a route's answer (see answers.ts), derived from its strict response schema:
 * every field of every object may be null or missing, and one of another type is read as absent
 * (undefined), but the fields the route needs, which must be there and of their type. Made once per
 * route, and only for an answer that deviated from the strict schema.
 */
export function lenientSchemaOf(route: AnyRoute, needed: readonly string[]): z.ZodType {
  let schema = LENIENT.get(route);
  if (!schema) {
    schema = lenientOf(route.response, new Set(needed));
    LENIENT.set(route, schema);
  }
  return schema;
}

const LENIENT = new WeakMap<AnyRoute, z.ZodType>();

/** `needed` applies at the top, or to each entry of a top-level list; deeper objects need nothing. */
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
