import { describe, expect, it } from 'vitest';
import { json, type RecordedRequest } from '../helpers/fault-server.js';
import { documentBody, NOW } from '../helpers/seed-bodies.js';
import { useFaultServer, useServe } from '../helpers/hooks.js';
import { runCli } from '../helpers/run-cli.js';

/**
 * Values the seed allows but `facectl serve` does not (its own choices: scope grammar, slug alias of
 * 3-64 characters, 1-365 days, name and label caps, its import types). A server that accepts anything
 * receives each of them unchanged, request by request; `facectl serve` refuses the same with a 422
 * that the CLI prints field by field. A document without perspective is sent without one.
 */

const document = (body: Record<string, unknown>) =>
  documentBody({
    alias: String(body.alias ?? 'x'),
    label: String(body.label ?? body.url ?? 'x'),
    content: String(body.content ?? 'x'),
    ...(body.type === undefined ? {} : { type: body.type }),
  });

/** Answers each creating POST with a minimal valid body, whatever it was sent. */
function acceptAnything(req: RecordedRequest, res: Parameters<typeof json>[0]) {
  const body = req.body === '' ? {} : (JSON.parse(req.body) as Record<string, unknown>);
  const path = req.url.replace(/\?.*$/, '');
  if (path === '/v1/auth/api-keys') {
    return json(res, 201, {
      key: 'fcs_live_accepted',
      id: 'key_1',
      name: body.name ?? null,
      created_at: NOW,
      expires_at: null,
      key_prefix: 'fcs_live',
      budget_usd: null,
      spent_usd: 0,
      allowed_face_ids: null,
      allowed_llm_models: null,
    });
  }
  if (path === '/v1/faces') return json(res, 201, { alias: body.alias, created: 1, owned_by: 'user_1' });
  if (path === '/v1/compile/threads')
    return json(res, 201, { thread_id: 'thr_1', alias: body.alias, label: body.label });
  return json(res, 201, document(body));
}

const fault = useFaultServer(acceptAnything);
const serve = useServe({ face: 'ada-lovelace', args: ['--allow-private-urls'] });

const toFault = (args: string[]) =>
  runCli([...args, '--json', '--no-input'], { env: { FACECTL_API_KEY: 'fcs_any', FACECTL_BASE_URL: fault.baseUrl } });
const toServe = (args: string[], form: '--json' | 'human' = '--json') =>
  runCli([...args, ...(form === '--json' ? ['--json'] : []), '--no-input'], {
    env: serve.env(),
  });

const long = 'a'.repeat(100);
const CASES: { name: string; args: string[]; field: string; value: unknown; refusal: string }[] = [
  {
    name: 'scopes other than the local grammar',
    args: ['keys', 'create', '--scopes', 'v1:billing,v1:faces:delete'],
    field: 'scopes',
    value: ['v1:billing', 'v1:faces:delete'],
    refusal: '- scopes.0: must be v1:*, v1:<area> or v1:<area>:<read|write>',
  },
  {
    name: 'expires_in_days 1000',
    args: ['keys', 'create', '--expires-in-days', '1000'],
    field: 'expires_in_days',
    value: 1000,
    refusal: '- expires_in_days: must be between 1 and 365 days',
  },
  {
    name: 'an alias of 2 characters',
    args: ['faces', 'create', '--name', 'Ada', '--alias', 'ab'],
    field: 'alias',
    value: 'ab',
    refusal: '- alias: must be a slug: lower-case letters, digits and single hyphens, 3 to 64 characters',
  },
  {
    name: 'an alias of 100 characters',
    args: ['faces', 'create', '--name', 'Ada', '--alias', long],
    field: 'alias',
    value: long,
    refusal: '- alias: must be a slug: lower-case letters, digits and single hyphens, 3 to 64 characters',
  },
  {
    name: 'a face name of 300 characters',
    args: ['faces', 'create', '--name', 'N'.repeat(300), '--alias', 'long-name'],
    field: 'name',
    value: 'N'.repeat(300),
    refusal: '- name: ',
  },
  {
    name: 'a thread label of 600 characters',
    args: ['threads', 'create', '--alias', 'ada-lovelace', '--label', 'L'.repeat(600)],
    field: 'label',
    value: 'L'.repeat(600),
    refusal: '- label: ',
  },
  {
    name: 'an import type the local service does not know',
    args: ['import', 'ada-lovelace', 'http://127.0.0.1:9/a.txt', '--type', 'video'],
    field: 'type',
    value: 'video',
    refusal: '- type: ',
  },
];

describe('seed-allowed values reach a service unchanged; facectl serve refuses its own way', () => {
  it.each(CASES)('$name: sent as given; facectl serve answers 422 naming the field', async (c) => {
    const before = fault.requests.length;
    const sent = await toFault(c.args);
    expect(sent.code, sent.stderr).toBe(0);
    expect(fault.requests.length).toBe(before + 1);
    const request = JSON.parse(fault.requests[before]?.body ?? '{}');
    expect(request[c.field]).toEqual(c.value);

    // For people: the status and one line per field; under --json the same list in the one error document.
    const refused = await toServe(c.args, 'human');
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain('status: 422 validation_error');
    expect(refused.stderr).toContain(c.refusal);
    expect(refused.stdout).toBe('');
    const asJson = await toServe(c.args);
    expect(asJson.code, asJson.stderr).toBe(2);
    const { error } = JSON.parse(asJson.stderr) as { error: { status: number; detail: { loc: string[] }[] } };
    expect(error.status).toBe(422);
    expect(error.detail.map((d) => d.loc[1])).toContain(c.field);
  });

  it('import type transcript (a type the seed leaves open) reaches the server unchanged', async () => {
    const before = fault.requests.length;
    const args = ['import', 'ada-lovelace', 'http://127.0.0.1:9/a.txt', '--type', 'transcript'];
    const sent = await toFault(args);
    expect(sent.code, sent.stderr).toBe(0);
    expect(JSON.parse(fault.requests[before]?.body ?? '{}')).toEqual({
      url: 'http://127.0.0.1:9/a.txt',
      type: 'transcript',
    });
  });

  it('a document without perspective is sent without one; the default the service answered is shown', async () => {
    const before = fault.requests.length;
    const args = ['docs', 'submit', '--alias', 'ada-lovelace', '--label', 'notes', '--content', 'Ada wrote notes.'];
    const sent = await toFault(args);
    expect(sent.code, sent.stderr).toBe(0);
    const body = JSON.parse(fault.requests[before]?.body ?? '{}');
    expect(body).toEqual({ alias: 'ada-lovelace', content: 'Ada wrote notes.', label: 'notes' });
    expect(body).not.toHaveProperty('perspective');

    const local = await toServe(args);
    expect(local.code, local.stderr).toBe(0);
    expect(JSON.parse(local.stdout)).toMatchObject({ perspective: 'third-person' });
  });
});
