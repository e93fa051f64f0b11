import type * as z from 'zod/mini';

/**
 * `__proto__` is an ordinary key of JSON (reliability case 55), but zod builds its output by assignment,
 * which sets the prototype instead: the key would vanish from what is sent, stored or shown.
 */

const PROTO = '__proto__';
const own = (value: unknown) => ({ value, writable: true, enumerable: true, configurable: true });
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Puts the `__proto__` keys `output` lost back as own data properties, at every depth. */
export function keepJsonKeys<T>(input: unknown, output: T): T {
  if (Array.isArray(input) && Array.isArray(output)) {
    input.forEach((item, i) => {
      if (i < output.length) keepJsonKeys(item, output[i]);
    });
    return output;
  }
  if (!isObject(input) || !isObject(output) || input === output) return output;
  if (Object.hasOwn(input, PROTO)) {
    if (Object.getPrototypeOf(output) !== Object.prototype) Object.setPrototypeOf(output, Object.prototype);
    if (!Object.hasOwn(output, PROTO)) Object.defineProperty(output, PROTO, own(input[PROTO]));
  }
  // Each value is mended in place (keepJsonKeys returns the output it was given).
  for (const key of Object.keys(input))
    if (key !== PROTO && Object.hasOwn(output, key)) keepJsonKeys(input[key], output[key]);
  return output;
}

/** `schema.safeParse(value)` whose data keeps the `__proto__` keys of the value. */
export function safeParseJson<S extends z.ZodMiniType>(schema: S, value: unknown) {
  const result = schema.safeParse(value);
  if (result.success) keepJsonKeys(value, result.data);
  return result;
}
