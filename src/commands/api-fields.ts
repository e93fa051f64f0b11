import { UsageError } from '../errors.js';

/**
 * The flags of `facectl api` that build a request piece by piece, as gh's `api` reads them:
 * `-H 'Name: value'`, `-f key=value` (always a string) and `-F key=value` (typed: true, false, null and
 * integers become JSON literals, `@file` reads a file, `@-` standard input). Keys may nest:
 * `-f 'a[b]=x'` gives {"a":{"b":"x"}}, `-f 'tags[]=x' -f 'tags[]=y'` gives {"tags":["x","y"]}.
 */

export interface Field {
  /** The key as given (`a[b][]`), for messages and query strings. */
  key: string;
  /** The key split into its parts; '' is an array append (`[]`). */
  path: string[];
  value: unknown;
  flag: '-f' | '-F';
}

/** Headers facectl sets itself from the body it sends, or that would change how the connection works. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
]);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export function parseHeader(text: string): [string, string] {
  const colon = text.indexOf(':');
  const name = colon > 0 ? text.slice(0, colon).trim() : '';
  const value = colon > 0 ? text.slice(colon + 1).trim() : '';
  if (!TOKEN.test(name)) {
    throw new UsageError(`-H ${JSON.stringify(text)}: expected 'Name: value'`, {
      hint: "e.g. -H 'Accept: application/json'",
    });
  }
  if (/[\r\n\0]/.test(value)) throw new UsageError(`-H ${name}: the value must not contain line breaks`);
  // undici refuses these only once the request is under way, which read as a network failure (exit 8).
  if (/[\x00-\x08\x0a-\x1f\x7f]/.test(value)) {
    throw new UsageError(`-H ${name}: the value must not contain control characters (other than tab)`);
  }
  if (/[^\x00-\xff]/.test(value)) {
    throw new UsageError(`-H ${name}: the value must not contain characters beyond U+00FF`, {
      hint: 'percent-encode the text, or send it in the body',
    });
  }
  if (RESERVED_HEADERS.has(name.toLowerCase())) {
    throw new UsageError(`-H ${name}: facectl sets this header itself`);
  }
  if (name.toLowerCase() === 'expect') {
    throw new UsageError(`-H ${name}: facectl does not send an Expect header (the body is sent with the request)`, {
      hint: `drop -H ${name}`,
    });
  }
  return [name, value];
}

/** Headers by lower-case name; a later -H of the same name replaces an earlier one. */
export function parseHeaders(list: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const text of list) {
    const [name, value] = parseHeader(text);
    headers[name.toLowerCase()] = value;
  }
  return headers;
}

/**
 * Parses one -f/-F flag. `readFile` reads `@path` (or `@-`) for -F; a -f value is taken literally.
 */
export async function parseField(
  text: string,
  flag: '-f' | '-F',
  readFile: (path: string) => Promise<string>,
): Promise<Field> {
  const eq = text.indexOf('=');
  if (eq <= 0)
    throw new UsageError(`${flag} ${JSON.stringify(text)}: expected key=value`, { hint: `e.g. ${flag} name=Ada` });
  const key = text.slice(0, eq);
  const raw = text.slice(eq + 1);
  const path = parseKey(key, flag);
  return { key, path, value: flag === '-f' ? raw : await typedValue(raw, readFile), flag };
}

function parseKey(key: string, flag: string): string[] {
  const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
  if (!match) {
    throw new UsageError(`${flag} ${key}: the key must be a name, optionally followed by [name] or []`, {
      hint: "e.g. -F 'metadata[source]=cli' or -f 'tags[]=one'",
    });
  }
  const parts = [match[1] as string, ...[...(match[2] ?? '').matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1] as string)];
  // `a[]` may only close the key: `a[][b]` would leave open which element `b` belongs to.
  if (parts.slice(0, -1).some((part) => part === '')) {
    throw new UsageError(`${flag} ${key}: [] may only come last in a key`);
  }
  return parts;
}

async function typedValue(raw: string, readFile: (path: string) => Promise<string>): Promise<unknown> {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  if (raw === 'null') return null;
  if (/^-?(0|[1-9]\d*)$/.test(raw) && Number.isSafeInteger(Number(raw))) return Number(raw);
  if (raw.startsWith('@')) return readFile(raw.slice(1));
  return raw;
}

/** The fields as one JSON object (the request body). */
export function fieldsToObject(fields: readonly Field[]): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const field of fields) {
    // Assigning `__proto__` would change the object's prototype instead of adding a key: refused.
    if (field.path.includes('__proto__')) {
      throw new UsageError(`${field.flag} ${field.key}: __proto__ cannot be sent as a field; use --input`);
    }
    let node: Record<string, unknown> = root;
    field.path.forEach((part, i) => {
      const last = i === field.path.length - 1;
      const next = field.path[i + 1];
      if (last) {
        if (part === '') return;
        node[part] = field.value;
        return;
      }
      if (next === '' && i + 1 === field.path.length - 1) {
        const list = node[part];
        if (list !== undefined && !Array.isArray(list)) throw conflict(field);
        node[part] = [...((list as unknown[] | undefined) ?? []), field.value];
        return;
      }
      const child = node[part];
      if (child === undefined) node[part] = {};
      else if (typeof child !== 'object' || child === null || Array.isArray(child)) throw conflict(field);
      node = node[part] as Record<string, unknown>;
    });
  }
  return root;
}

function conflict(field: Field): UsageError {
  return new UsageError(`${field.flag} ${field.key}: conflicts with an earlier field of the same name`);
}

/** The fields as query parameters (GET): `key=value` with the key as given, values as text. */
export function fieldsToQuery(fields: readonly Field[]): string {
  const query = new URLSearchParams();
  for (const field of fields) {
    const value = field.value;
    query.append(field.key, typeof value === 'string' ? value : JSON.stringify(value));
  }
  return query.toString();
}
