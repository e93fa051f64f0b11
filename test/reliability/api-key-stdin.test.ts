import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/serve-process.js';
import { useService } from '../helpers/service-suite.js';
import { makeConfigDir, runCli } from '../helpers/run-cli.js';

// Issue 12, item 6: `--api-key-stdin` with the input on standard input too. The key is the first line
// of standard input and the input is the rest (README, "Global flags"), in every command that reads
// standard input: docs submit -, threads replace-messages -, faces create --basic-facts -. An empty or
// mangled key line is a usage error (exit 2) before anything is sent.

const service = useService({}, { faces: ['ada-keyin'] });
beforeAll(() => ensureBuilt(), 120_000);
const key = () => service.key('pro');

/** The bin with no key but the one on standard input. */
function cli(args: string[], stdin: string) {
  return runCli([...args, '--api-key-stdin', '--json'], {
    env: { FACECTL_CONFIG_DIR: makeConfigDir(), FACECTL_BASE_URL: service.baseUrl },
    stdin,
  });
}

function documentsLabelled(label: string) {
  return [...service.store.values('documents')].filter((d) => d.label === label);
}

describe('--api-key-stdin with the input on standard input: the key is the first line, the input the rest', () => {
  it('docs submit - (plain text): the rest is the document', async () => {
    const result = await cli(
      ['docs', 'submit', '--alias', 'ada-keyin', '--label', 'keyin-text', '-'],
      `${key()}\nDear Babbage,\nyours, Ada`,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).label).toBe('keyin-text');
    expect(documentsLabelled('keyin-text').map((d) => d.content)).toEqual(['Dear Babbage,\nyours, Ada']);
  });

  it('docs submit - (NDJSON): every line after the key is a document, numbered from the first of them', async () => {
    const lines = ['keyin-nd-1', 'keyin-nd-2'].map((label) =>
      JSON.stringify({ alias: 'ada-keyin', label, content: label }),
    );
    const result = await cli(['docs', 'submit', '-'], `${key()}\n${lines.join('\n')}\n`);
    expect(result.code, result.stderr).toBe(0);
    const results = result.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(results.map((r) => r.line).sort()).toEqual([1, 2]);
    expect(documentsLabelled('keyin-nd-1')).toHaveLength(1);
    expect(documentsLabelled('keyin-nd-2')).toHaveLength(1);
  });

  it('threads replace-messages -: the rest is the message list', async () => {
    const created = await runCli(['threads', 'create', '--alias', 'ada-keyin', '--label', 'keyin-thread', '--json'], {
      env: { FACECTL_BASE_URL: service.baseUrl, FACECTL_API_KEY: key() },
    });
    expect(created.code, created.stderr).toBe(0);
    const threadId = JSON.parse(created.stdout).thread_id as string;
    const messages = [{ role: 'user', content: 'Dear Babbage', from: 'Ada' }];
    const result = await cli(['threads', 'replace-messages', threadId, '-'], `${key()}\n${JSON.stringify(messages)}`);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).message_count).toBe(1);
  });

  it('faces create --basic-facts -: the rest is the JSON object', async () => {
    const result = await cli(
      ['faces', 'create', '--name', 'Ada', '--alias', 'ada-keyin-facts', '--basic-facts', '-'],
      `${key()}\n{"born": 1815}\n`,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).basic_facts).toEqual({ born: 1815 });
  });

  it('an empty key line is exit 2 (the key from standard input is empty), nothing sent', async () => {
    const before = service.stats.requests;
    const result = await cli(
      ['docs', 'submit', '--alias', 'ada-keyin', '--label', 'keyin-empty', '-'],
      '\nDear Babbage',
    );
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain('the API key from standard input is empty');
    expect(service.stats.requests).toBe(before);
  });
});

describe('a key the service refuses (401)', () => {
  it('the hint says where a new key goes, by where the refused one came from: stdin, FACECTL_API_KEY, the profile', async () => {
    const refused = 'fcs_refused1_0123456789abcdefABCDEFGHIJ0123';
    const fromStdin = await runCli(['faces', 'get', 'ada-keyin', '--api-key-stdin'], {
      env: { FACECTL_BASE_URL: service.baseUrl },
      stdin: `${refused}\n`,
    });
    const fromEnv = await runCli(['faces', 'get', 'ada-keyin'], {
      env: { FACECTL_BASE_URL: service.baseUrl, FACECTL_API_KEY: refused },
    });
    const dir = makeConfigDir();
    const stored = { api_key: refused, api_key_base_url: service.baseUrl, base_url: service.baseUrl };
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ profiles: { work: stored } }), { mode: 0o600 });
    const fromProfile = await runCli(['faces', 'get', 'ada-keyin', '--profile', 'work'], {
      env: { FACECTL_CONFIG_DIR: dir },
    });
    for (const [result, hint] of [
      [fromStdin, 'give a new key with --api-key-stdin'],
      [fromEnv, 'set FACECTL_API_KEY to a new key'],
      [fromProfile, 'run `facectl auth login --profile work` with a new key'],
    ] as const) {
      expect(result.code, result.stderr).toBe(3);
      expect(result.stdout).toBe('');
      const lines = result.stderr.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^error: the service refused the API key \(401: invalid API key/);
      expect(lines.at(-1)).toBe(hint);
      expect(result.stderr).not.toContain(refused);
    }
  });
});

describe('auth login --api-key-stdin while FACECTL_API_KEY is set', () => {
  it('another key: stored, with one warning that the variable takes precedence; the very same key: no warning', async () => {
    const login = (env: string) =>
      runCli(['auth', 'login', '--api-key-stdin'], {
        env: { FACECTL_BASE_URL: service.baseUrl, FACECTL_API_KEY: env },
        stdin: `${key()}\n`,
      });
    const other = await login(service.key('standard'));
    expect(other.code, other.stderr).toBe(0);
    expect(other.stdout).toBe('');
    expect(other.stderr).toContain(
      'warning: FACECTL_API_KEY is set to another key, which is used instead of the stored one (`unset FACECTL_API_KEY` to use it)\n',
    );
    // Once in the warning's words, once in its fix (a ring saw the name doubled in parentheses).
    expect(other.stderr.match(/FACECTL_API_KEY/g)).toHaveLength(2);
    const same = await login(key());
    expect(same.code, same.stderr).toBe(0);
    expect(same.stderr).toContain(`stored key ${key().slice(0, 12)}… in profile default`);
    expect(same.stderr).not.toContain('FACECTL_API_KEY');
  });
});

describe('auth login with no terminal and no --api-key-stdin (CI)', () => {
  it('exit 2; the hint pipes FACECTL_API_KEY in when it is set, else names a variable a shell refuses as is', async () => {
    const before = service.stats.requests;
    for (const [env, hint] of [
      [{}, 'pipe the key in: `printenv <VARIABLE> | facectl auth login --api-key-stdin`'],
      [{ FACECTL_API_KEY: key() }, 'pipe the key in: `printenv FACECTL_API_KEY | facectl auth login --api-key-stdin`'],
    ] as const) {
      const result = await runCli(['auth', 'login'], { env: { FACECTL_BASE_URL: service.baseUrl, ...env } });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(
        'error: no API key given: `auth login` asks for it on a terminal, or reads it with --api-key-stdin ' +
          '(standard input is not a terminal)\n' +
          `${hint}\n`,
      );
    }
    expect(service.stats.requests).toBe(before);
  });
});
