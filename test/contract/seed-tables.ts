import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Reads the seed document itself (../shared/spec/face-compilation-service.md): its tables of fields,
 * its "Allowed values" sentences and its endpoint table, into plain field descriptions that the
 * conformance and proxy tests compare with the contract. Nothing here is copied from the contract.
 */

/** The seed where the project's shared folder sits beside the clone (as in CI). */
export const SHARED_SEED_PATH = fileURLToPath(
  new URL('../../../shared/spec/face-compilation-service.md', import.meta.url),
);
/**
 * A copy kept with the tests, so `npm test` runs from a clone anywhere; when the shared seed is there,
 * the seed test holds the copy equal to it, so the two cannot drift apart unnoticed.
 */
export const SEED_COPY_PATH = fileURLToPath(new URL('../fixtures/seed/face-compilation-service.md', import.meta.url));
export const SEED_PATH = existsSync(SHARED_SEED_PATH) ? SHARED_SEED_PATH : SEED_COPY_PATH;

export type SeedType = 'string' | 'integer' | 'number' | 'boolean' | 'date-time' | 'object' | 'array';

export interface SeedField {
  name: string;
  type: SeedType;
  /** For arrays: the element type (`string`, or a named shape such as `thread message`). */
  items?: string;
  nullable: boolean;
  /** true, false, or null where the seed does not say ("not shown"). */
  required: boolean | null;
  default?: unknown;
  enum?: string[];
}

export interface SeedTable {
  title: string;
  /** The section's text outside the table. */
  notes: string;
  fields: SeedField[];
}

export interface SeedEndpoint {
  method: string;
  path: string;
  request: string;
  response: string;
}

export interface Seed {
  text: string;
  tables: Map<string, SeedTable>;
  endpoints: SeedEndpoint[];
}

function cells(line: string): string[] {
  return line
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((c) => c.trim());
}

function enumFrom(text: string): string[] | undefined {
  // "one of first-person, third-person", "string: oauth, compile or credits", "(oauth, compile or credits)"
  const match = /(?:one of |: |\()([a-z-]+(?:, [a-z-]+)*(?:,? or [a-z-]+)?)\)?$/.exec(text);
  if (!match?.[1] || !/,| or /.test(match[1])) return undefined;
  return match[1].split(/, | or |,? or /).map((v) => v.trim());
}

export function parseType(text: string): Pick<SeedField, 'type' | 'items' | 'nullable' | 'enum'> {
  const nullable = /,\s*nullable\b/.test(text);
  const base = text.replace(/,\s*nullable\b/, '').trim();
  const field: Pick<SeedField, 'type' | 'items' | 'nullable' | 'enum'> = { type: 'string', nullable };
  const array = /^array of (.+)$/.exec(base);
  if (array?.[1]) {
    field.type = 'array';
    field.items = array[1].replace(/\s*\(.*\)$/, '');
    return field;
  }
  const head = /^(string|integer|number|boolean|date-time|object)\b/.exec(base)?.[1];
  if (!head) throw new Error(`unknown seed type: ${text}`);
  field.type = head as SeedType;
  const values = enumFrom(base.slice(head.length));
  if (values) field.enum = values;
  return field;
}

function requiredFrom(header: string, value: string | undefined): Pick<SeedField, 'required' | 'default'> {
  if (value === undefined) return { required: null };
  const v = value.trim();
  if (/^(yes|required)$/.test(v)) return { required: true };
  if (/^(no|optional)$/.test(v)) return { required: false };
  const def = /^default (\S+)/.exec(v);
  if (def) return { required: false, default: def[1] };
  throw new Error(`unknown ${header} value: ${value}`);
}

export function readSeed(path = SEED_PATH): Seed {
  const text = readFileSync(path, 'utf8');
  const tables = new Map<string, SeedTable>();
  const endpoints: SeedEndpoint[] = [];
  const sections = text.split(/^#{2,3} /m).slice(1);
  for (const section of sections) {
    const [titleLine = '', ...rest] = section.split('\n');
    const title = titleLine.replace(/\s*\(.*\)$/, '').trim();
    const lines = rest.filter((l) => l.startsWith('|'));
    const notes = rest.filter((l) => !l.startsWith('|')).join('\n');
    if (lines.length < 2) continue;
    const header = cells(lines[0] as string);
    const rows = lines.slice(2).map(cells);
    if (header[0] === 'Method') {
      for (const row of rows) {
        endpoints.push({
          method: row[0] as string,
          path: row[1] as string,
          request: row[2] as string,
          response: row[3] as string,
        });
      }
      continue;
    }
    if (header[0] === 'Form') {
      // Thread message: one row per form, "name (type), ..."; whether each is required: not shown.
      for (const row of rows) {
        const fields = (row[1] as string).split(/,\s*(?![^(]*\))/).map((part) => {
          const m = /^(\w+) \((\w+)\)$/.exec(part.trim());
          if (!m) throw new Error(`unknown message field: ${part}`);
          return { name: m[1] as string, ...parseType(m[2] as string), required: null };
        });
        tables.set(`${title} (${row[0]})`, { title: `${title} (${row[0]})`, notes, fields });
      }
      continue;
    }
    if (header[0] !== 'Field') continue;
    const reqHeader = header[2];
    const fields = rows.map((row) => {
      const field: SeedField = {
        name: row[0] as string,
        ...parseType(row[1] as string),
        ...requiredFrom(reqHeader ?? '', reqHeader === 'Notes' ? undefined : row[2]),
      };
      // "a scope has the form v1:*" and other notes stay in `notes` for the tests that need them.
      return field;
    });
    if (/No field is marked required/.test(notes)) for (const f of fields) f.required = false;
    // "Allowed values of perspective: first-person, third-person."
    for (const m of notes.matchAll(/Allowed values of (\w+): ([a-z-]+(?:, [a-z-]+)+)\./g)) {
      const field = fields.find((f) => f.name === m[1]);
      if (field) field.enum = (m[2] as string).split(', ');
    }
    tables.set(title, { title, notes, fields });
  }
  return { text, tables, endpoints };
}

/** The subjects of every "not shown" in the seed: the words before ": not shown", or a table cell. */
export function notShownSubjects(text: string): string[] {
  const subjects: string[] = [];
  for (const line of text.split('\n')) {
    if (!line.includes('not shown')) continue;
    if (line.startsWith('|')) {
      const row = cells(line);
      subjects.push(`Response of ${row[0]} ${row[1]}`);
      continue;
    }
    for (const m of line.matchAll(/(?:^|\. |^\d+\. )([^.]*?): not shown/g)) {
      subjects.push((m[1] as string).replace(/^\d+\. /, '').trim());
    }
  }
  return subjects;
}

/** A JSON Schema property reduced to what the seed's tables state. */
export interface SchemaFacts {
  type: SeedType | 'unknown';
  items?: string;
  nullable: boolean;
  enum?: string[];
  default?: unknown;
}

type JsonSchema = Record<string, unknown>;

export function facts(schema: JsonSchema, resolve: (ref: string) => JsonSchema = () => ({})): SchemaFacts {
  let s = schema;
  if (typeof s.$ref === 'string') s = { ...resolve(s.$ref), ...s };
  let nullable = false;
  const variants = (s.anyOf ?? s.oneOf) as JsonSchema[] | undefined;
  if (variants) {
    const others = variants.filter((v) => v.type !== 'null');
    nullable = others.length < variants.length;
    const inner = facts(others.length === 1 ? (others[0] as JsonSchema) : {}, resolve);
    return {
      ...inner,
      nullable: nullable || inner.nullable,
      ...(s.default === undefined ? {} : { default: s.default }),
    };
  }
  if (Array.isArray(s.type)) {
    nullable = s.type.includes('null');
    s = { ...s, type: s.type.find((t) => t !== 'null') };
  }
  const out: SchemaFacts = { type: 'unknown', nullable };
  if (s.type === 'string' && s.format === 'date-time') out.type = 'date-time';
  else if (typeof s.type === 'string' && s.type !== 'null') out.type = s.type as SeedType;
  else if (Array.isArray(s.enum)) out.type = 'string';
  if (Array.isArray(s.enum)) out.enum = s.enum as string[];
  if (s.default !== undefined) out.default = s.default;
  if (out.type === 'array') {
    const items = facts((s.items ?? {}) as JsonSchema, resolve);
    out.items = items.type === 'object' ? 'object' : items.type;
  }
  return out;
}
