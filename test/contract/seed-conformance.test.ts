import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import {
  apiKey,
  apiKeyCreateRequest,
  type AnyRoute,
  componentCounts,
  document,
  documentCreateRequest,
  face,
  faceCreateRequest,
  importRequest,
  oauthConnection,
  routes,
  seedScope,
  thread,
  threadCreateRequest,
  threadMessageRequest,
  threadMessageResponse,
} from '../../src/contract/index.js';
import { run } from '../../src/main.js';
import { createTestContext } from '../helpers/test-context.js';
import {
  facts,
  notShownSubjects,
  readSeed,
  SEED_COPY_PATH,
  type SchemaFacts,
  SHARED_SEED_PATH,
  type SeedField,
} from './seed-tables.js';

/**
 * The seed document's own tables, field by field, against the contract's zod schemas and against the
 * OpenAPI document `facectl openapi` prints: type, nullable, required, default and allowed values of
 * every field; no field the seed does not have unless marked as an extension; the endpoint table
 * against the routes; every "not shown" of the seed listed with our choice in
 * docs/local-service-choices.md.
 */

type Json = Record<string, unknown>;
const seed = readSeed();

async function openapi(): Promise<Json> {
  const tc = createTestContext();
  try {
    if ((await run(['openapi'], tc.ctx)) !== 0) throw new Error(tc.stderr());
    return JSON.parse(tc.stdout()) as Json;
  } finally {
    await tc.close();
  }
}
const doc = await openapi();

type Part = 'request' | 'response';
interface Where {
  path: string;
  method: string;
  part: Part;
  /** A path inside the schema, e.g. ['messages', 'items'] or ['items']. */
  inner?: string[];
}

/** Where `facectl openapi` shows a schema: `method path`, the request or the response, a path inside it. */
const at = (route: string, part: Part, ...inner: string[]): Where => {
  const [method = '', path = ''] = route.split(' ');
  return { path, method, part, ...(inner.length > 0 ? { inner } : {}) };
};

const MESSAGES = 'patch /v1/compile/threads/{thread_id}/messages';

/** Each seed table: the contract schema it must equal, and where `facectl openapi` shows it. */
const TABLES: Record<string, { schema: z.ZodMiniType; where: Where }> = {
  'API key create request': { schema: apiKeyCreateRequest, where: at('post /v1/auth/api-keys', 'request') },
  'API key': { schema: apiKey, where: at('post /v1/auth/api-keys', 'response') },
  'Face create request': { schema: faceCreateRequest, where: at('post /v1/faces', 'request') },
  Face: { schema: face, where: at('post /v1/faces', 'response') },
  'Import request': { schema: importRequest, where: at('post /v1/faces/{face_id}/import', 'request') },
  'Compile document create request': {
    schema: documentCreateRequest,
    where: at('post /v1/compile/documents', 'request'),
  },
  Document: { schema: document, where: at('post /v1/compile/documents', 'response') },
  'Compile thread': { schema: thread, where: at(MESSAGES, 'response') },
  'Thread message (request)': { schema: threadMessageRequest, where: at(MESSAGES, 'request', 'messages', 'items') },
  'Thread message (response)': { schema: threadMessageResponse, where: at(MESSAGES, 'response', 'messages', 'items') },
  'Compile thread create request': { schema: threadCreateRequest, where: at('post /v1/compile/threads', 'request') },
  'OAuth connection entry': { schema: oauthConnection, where: at('get /v1/oauth', 'response', 'items') },
};

const contractJson = (schema: z.ZodMiniType): Json =>
  z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) as Json;

function openapiJson(where: Where): Json {
  const operation = (doc.paths as Record<string, Record<string, Json>>)[where.path]?.[where.method];
  if (!operation) throw new Error(`facectl openapi has no ${where.method} ${where.path}`);
  let schema: Json;
  if (where.part === 'request') {
    schema = (operation.requestBody as Json | undefined)?.content as Json;
    schema = ((schema?.['application/json'] as Json)?.schema ?? {}) as Json;
  } else {
    const answers = operation.responses as Record<string, Json>;
    const ok = answers['200'] ?? answers['201'];
    schema = (((ok?.content as Json)?.['application/json'] as Json)?.schema ?? {}) as Json;
  }
  for (const step of where.inner ?? []) {
    schema = (step === 'items' ? schema.items : (schema.properties as Json)[step]) as Json;
  }
  return schema;
}

/** The seed field as the facts a JSON Schema can state. */
function expected(field: SeedField): { facts: SchemaFacts; required: boolean } {
  const out: SchemaFacts = { type: field.type, nullable: field.nullable };
  if (field.type === 'array') out.items = field.items === 'string' ? 'string' : 'object';
  if (field.enum) out.enum = field.enum;
  if (field.default !== undefined) out.default = field.default;
  // Where the seed does not say whether a field is required ("not shown"), our choice is that the
  // contract requires none of them (docs/local-service-choices.md, "Where the seed says 'not shown'").
  return { facts: out, required: field.required === true };
}

function actual(schema: Json, name: string): { facts: SchemaFacts; required: boolean } {
  const property = (schema.properties as Record<string, Json>)[name];
  if (!property) throw new Error(`no field ${name}`);
  const f = facts(property);
  const sorted: SchemaFacts = { type: f.type, nullable: f.nullable };
  if (f.items !== undefined) sorted.items = f.items;
  if (f.enum !== undefined) sorted.enum = [...f.enum];
  if (f.default !== undefined) sorted.default = f.default;
  return { facts: sorted, required: ((schema.required as string[] | undefined) ?? []).includes(name) };
}

const FIELD_CASES = [...seed.tables.values()].flatMap((table) =>
  table.fields.map((field) => ({ table: table.title, field: field.name, seedField: field })),
);
const SOURCES = ['contract', 'facectl openapi'] as const;

describe('the seed document is read', () => {
  it('the copy kept with the tests is the seed itself (compared whenever the shared folder is beside the clone)', () => {
    const copy = readFileSync(SEED_COPY_PATH, 'utf8');
    if (existsSync(SHARED_SEED_PATH)) expect(copy).toBe(readFileSync(SHARED_SEED_PATH, 'utf8'));
    expect(readSeed(SEED_COPY_PATH).tables.size).toBeGreaterThan(10);
  });

  it('every table of fields has a contract schema, and the reader found them all', () => {
    expect([...seed.tables.keys()].sort()).toEqual(Object.keys(TABLES).sort());
    expect(FIELD_CASES.length).toBeGreaterThan(90);
    expect(seed.endpoints).toHaveLength(9);
  });
});

describe.each(SOURCES)('field by field with the seed: %s', (source) => {
  const schemaOf = (title: string): Json => {
    const entry = TABLES[title];
    if (!entry) throw new Error(`no contract schema for the seed table ${title}`);
    return source === 'contract' ? contractJson(entry.schema) : openapiJson(entry.where);
  };

  it.each(FIELD_CASES)('$table: $field', ({ table, field, seedField }) => {
    const { facts: seen, required } = actual(schemaOf(table), field);
    const want = expected(seedField);
    expect({ ...seen, enum: seen.enum?.sort() }).toEqual({ ...want.facts, enum: want.facts.enum?.sort() });
    expect(required, `${table}.${field} required`).toBe(want.required);
  });

  it.each([...seed.tables.keys()])('%s: no field beyond the seed unless marked as an extension', (title) => {
    const schema = schemaOf(title);
    const seedNames = new Set(seed.tables.get(title)?.fields.map((f) => f.name));
    const extra = Object.entries((schema.properties ?? {}) as Record<string, Json>)
      .filter(([name, property]) => !seedNames.has(name) && property['x-facectl-extension'] !== true)
      .map(([name]) => name);
    expect(extra).toEqual([]);
    // Unknown fields stay accepted: no seed object is closed.
    expect(schema.additionalProperties).not.toBe(false);
  });
});

describe('what the seed says in words', () => {
  it('component_counts has four integer members, alpha, beta, delta, epsilon, each 0 by default', () => {
    const sentence = /component_counts has four integer members: ([a-z, ]+)\. Each is (\d+) by default/.exec(seed.text);
    expect(sentence).not.toBeNull();
    const names = (sentence?.[1] as string).split(', ');
    const members = contractJson(componentCounts).properties as Record<string, Json>;
    expect(Object.keys(members).sort()).toEqual([...names].sort());
    for (const name of names) expect(members[name]).toMatchObject({ type: 'integer', default: Number(sentence?.[2]) });
  });

  it('a scope has the form v1:* (the client accepts that form, and nothing else is required of it)', () => {
    expect(seed.text).toMatch(/\| scopes \| array of string, nullable \| a scope has the form v1:\* \|/);
    for (const value of ['v1:*', 'v1:faces', 'v1:billing', 'v1:faces:delete']) {
      expect(seedScope.safeParse(value).success, value).toBe(true);
    }
    for (const value of ['v2:*', 'faces', 'v1:']) expect(seedScope.safeParse(value).success, value).toBe(false);
  });

  it('the one error the seed states, 403 for the OAuth endpoints, is in facectl openapi', () => {
    expect(seed.text).toMatch(/Free or Standard plan user calls the OAuth endpoints \| 403/);
    const paths = doc.paths as Record<string, Record<string, Json>>;
    for (const [path, method] of [
      ['/v1/oauth', 'get'],
      ['/v1/oauth/{provider}/authorize', 'get'],
      ['/v1/oauth/{provider}', 'delete'],
    ] as const) {
      expect(Object.keys(paths[path]?.[method]?.responses as Json)).toContain('403');
    }
  });
});

describe('the endpoint table', () => {
  const all = Object.values(routes) as AnyRoute[];
  const routeFor = (method: string, path: string) => all.find((r) => r.method === method && r.path === path);
  const bySchema = new Map<z.ZodMiniType, string>(Object.entries(TABLES).map(([title, { schema }]) => [schema, title]));

  it.each(seed.endpoints)('$method $path: a route of the contract, not an extension, with the seed shapes', (row) => {
    const route = routeFor(row.method, row.path);
    expect(route, `${row.method} ${row.path}`).toBeDefined();
    if (!route) return;
    expect(route.extension).toBe(false);
    const operation = (doc.paths as Record<string, Record<string, Json>>)[row.path]?.[row.method.toLowerCase()];
    expect(operation?.['x-facectl-extension']).toBeUndefined();

    // Request: a named table, an object described in words, or none.
    const requestTitle = Object.keys(TABLES).find((t) => row.request.endsWith(t));
    if (row.request === 'none') expect(route.body).toBeUndefined();
    else if (requestTitle) expect(bySchema.get(route.body as z.ZodMiniType)).toBe(requestTitle);
    else {
      const [, name] = /^object with (\w+):/.exec(row.request) ?? [];
      expect(Object.keys((contractJson(route.body as z.ZodMiniType).properties ?? {}) as Json)).toEqual([name]);
    }

    // Response: a named table, an array of one, an object with a named field, or "not shown".
    const response = contractJson(route.response);
    const array = /^array of (.+)$/.exec(row.response);
    const objectWith = /^object with (\w+) \((\w+)\)/.exec(row.response);
    if (row.response === 'not shown') {
      // Our choice (docs/local-service-choices.md): POST /v1/compile/threads answers the Compile thread.
      expect(bySchema.get(route.response)).toBe('Compile thread');
    } else if (array) {
      expect(response.type).toBe('array');
      expect(route.response).toBeInstanceOf(z.ZodMiniArray);
      expect(bySchema.get((route.response as z.ZodMiniArray<z.ZodMiniType>)._zod.def.element)).toBe(array[1]);
    } else if (objectWith) {
      expect((response.properties as Record<string, Json>)[objectWith[1] as string]).toMatchObject({
        type: objectWith[2],
      });
      expect(response.required).toContain(objectWith[1]);
    } else {
      expect(bySchema.get(route.response)).toBe(row.response);
    }
  });

  it('every other route of the contract is marked as an extension, in the contract and in facectl openapi', () => {
    const seedRoutes = new Set(seed.endpoints.map((e) => `${e.method} ${e.path}`));
    const others = all.filter((r) => !seedRoutes.has(`${r.method} ${r.path}`));
    expect(others.length).toBeGreaterThan(0);
    for (const route of others) {
      expect(route.extension, route.name).toBe(true);
      const operation = (doc.paths as Record<string, Record<string, Json>>)[route.path]?.[route.method.toLowerCase()];
      expect(operation?.['x-facectl-extension'], route.name).toBe(true);
    }
  });
});

describe('where the seed says "not shown"', () => {
  const choices = readFileSync(
    fileURLToPath(new URL('../../docs/local-service-choices.md', import.meta.url)),
    'utf8',
  ).split('## Where the seed says "not shown"')[1];

  it('docs/local-service-choices.md has the section', () => {
    expect(choices).toBeDefined();
  });

  it.each(notShownSubjects(seed.text).map((s) => s.replace(/^The r/, 'R')))(
    '"%s: not shown" is listed with the choice made',
    (subject) => {
      const row = (choices ?? '').split('\n').find((line) => line.startsWith(`| ${subject} |`));
      expect(row, subject).toBeDefined();
      const [, , choice, where] = (row as string).split(' | ');
      expect(choice?.trim()).not.toBe('');
      expect(where?.replace(/\|$/, '').trim()).not.toBe('');
    },
  );
});
