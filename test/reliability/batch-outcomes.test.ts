import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/serve-process.js';
import { createKey, useService } from '../helpers/service-suite.js';
import { runCli } from '../helpers/run-cli.js';
import { batchEnv, resultLines, storedLabels, tempFile, unreachableUrl } from './support.js';

// What a batch's exit code says: 2 only when bad input left nothing sent; a batch that submitted some
// lines and failed on others is a partly failed batch, exit 1, the bad line named either way.

const service = useService({}, { faces: ['ada-out'] });
beforeAll(() => ensureBuilt(), 120_000);

const doc = (label: string) => JSON.stringify({ alias: 'ada-out', label, content: `${label} ✓` });
const env = () => batchEnv(service.key('pro'), service.baseUrl);

describe('batch exit codes: 2 only when nothing was sent', () => {
  it('a file with a bad line under --continue-on-error: the rest is sent, exit 1, line 3 named', async () => {
    const file = tempFile(
      'mixed.ndjson',
      `${[doc('mix-1'), doc('mix-2'), '{"alias": oops', doc('mix-4')].join('\n')}\n`,
    );
    const res = await runCli(['docs', 'submit', '--file', file, '--continue-on-error', '--json'], { env: env() });
    expect(res.code, res.stderr).toBe(1);
    const out = resultLines(res.stdout);
    expect(out.map((r) => [r.line, r.ok]).sort()).toEqual([
      [1, true],
      [2, true],
      [3, false],
      [4, true],
    ]);
    expect(out.find((r) => r.line === 3)?.error).toMatchObject({ code: 'invalid_input' });
    const error = (JSON.parse(res.stderr) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe('batch_failed');
    expect(error.message).toMatch(/^1 document failed \(line 3, column \d+: invalid JSON/);
    expect(storedLabels(service, 'mix-')).toEqual(['mix-1', 'mix-2', 'mix-4']);
  });

  it("a line the service refuses as invalid: its result names the service's field error (a breaker's finding)", async () => {
    const bad = JSON.stringify({ alias: 'ADA', label: 'fld-2', content: 'x' });
    const file = tempFile('fields.ndjson', `${[doc('fld-1'), bad].join('\n')}\n`);
    const res = await runCli(['docs', 'submit', '--file', file, '--continue-on-error', '--json'], { env: env() });
    expect(res.code, res.stderr).toBe(1);
    const failed = resultLines(res.stdout).find((r) => r.line === 2);
    expect(failed?.error?.message).toMatch(
      /^the service refused the request as invalid \(422 validation_error\): alias: must be a slug/,
    );
    expect(storedLabels(service, 'fld-')).toEqual(['fld-1']);
  });

  it('every line bad under --continue-on-error: nothing sent, exit 2', async () => {
    const file = tempFile(
      'allbad.ndjson',
      '{"alias":"ada-out","label":"allbad-1"}\n{"content":"x","label":"allbad-2"}\n',
    );
    const before = service.stats.requests;
    const res = await runCli(['docs', 'submit', '--file', file, '--continue-on-error'], { env: env() });
    expect(res.code, res.stderr).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/line 1: content: required/);
    expect(res.stderr).toMatch(/line 2: alias: required/);
    expect(service.stats.requests).toBe(before);
    expect(storedLabels(service, 'allbad-')).toEqual([]);
  });

  it('standard input: a bad line after sent ones stops the batch with exit 1, naming the line', async () => {
    const input = `${[doc('in-1'), doc('in-2'), '[1, 2]', doc('in-4')].join('\n')}\n`;
    const res = await runCli(['docs', 'submit', '-'], { env: env(), stdin: input });
    expect(res.code, res.stderr).toBe(1);
    expect(
      res.stdout
        .trim()
        .split('\n')
        .map((l) => l.split('\t')[0]),
    ).toEqual(['1', '2']);
    expect(res.stderr).toContain('error: standard input: line 3: expected a JSON object');
    expect(res.stderr).toContain('2 documents before it were already submitted');
    // The bad line is a failed line of the batch.
    expect(res.stderr).toContain('Submitted 2 documents, 1 failed.');
    expect(storedLabels(service, 'in-')).toEqual(['in-1', 'in-2']);
  });

  for (const [what, bad] of [
    ['a line over the size limit (no newline)', Buffer.alloc(64 * 1024 * 1024 + 2, 'a')],
    ['a line that is not JSON', Buffer.from('not json\n')],
  ] as const) {
    it(`standard input, the service unreachable, then ${what}: both lines failed, the unreachable service decides (exit 8)`, async () => {
      const env = batchEnv(service.key('pro'), await unreachableUrl());
      const res = await runCli(['docs', 'submit', '--json', '-'], {
        env,
        stdin: Buffer.concat([Buffer.from(`${doc('down-1')}\n`), bad]),
      });
      expect(res.code, res.stderr).toBe(8);
      // Both failed lines have their result line, the bad one that stopped the batch last.
      expect(resultLines(res.stdout)).toEqual([
        { line: 1, ok: false, error: { code: 'network_error', message: expect.stringMatching(/connection refused/) } },
        { line: 2, ok: false, error: { code: expect.any(String), message: expect.any(String) } },
      ]);
      const error = (JSON.parse(res.stderr) as { error: { message: string; warnings: string[] } }).error;
      // Line 2 is named too, and counted.
      expect(error.message).toMatch(
        /^2 documents failed \(line 1: .*connection refused\).*standard input: line 2[,:] /,
      );
      expect(error.warnings).toEqual([expect.stringMatching(/^Submitted 0 documents, 2 failed\./)]);
    }, 60_000);
  }

  it('standard input, --json: the bad line that stops the batch has its result line on stdout, as every line', async () => {
    const input = `${doc('sel-1')}\nbad\n${doc('sel-3')}\n`;
    const res = await runCli(['docs', 'submit', '-', '--json'], { env: env(), stdin: input });
    expect(res.code, res.stderr).toBe(1);
    const lines = res.stdout.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('');
    expect(JSON.parse(lines[0] as string)).toEqual({
      line: 1,
      ok: true,
      document_id: expect.stringMatching(/^doc_/),
      token_count: expect.any(Number),
    });
    expect(lines[1]).toBe(
      '{"line":2,"ok":false,"error":{"code":"invalid_input","message":"column 1: invalid JSON: unexpected \\"b\\" where a value was expected"}}',
    );
    // What `jq -c 'select(.ok | not)'` finds: the bad line, named as the error names it.
    expect(resultLines(res.stdout).filter((r) => !r.ok)).toEqual([
      { line: 2, ok: false, error: { code: 'invalid_input', message: expect.stringContaining('invalid JSON') } },
    ]);
    expect(JSON.parse(res.stderr).error.message).toBe(
      'standard input: line 2, column 1: invalid JSON: unexpected "b" where a value was expected',
    );
    expect(storedLabels(service, 'sel-')).toEqual(['sel-1']);
    // --jq sees it too.
    const jq = await runCli(['docs', 'submit', '-', '--json', '--jq', 'select(.ok | not) | .line'], {
      env: env(),
      stdin: `${doc('selq-1')}\nbad\n`,
    });
    expect(jq.code, jq.stderr).toBe(1);
    expect(jq.stdout).toBe('2\n');
  });

  it('a key the service refuses: exit 3 with the 401 code and where a new key goes, as a single command says', async () => {
    const refused = batchEnv('garbage', service.baseUrl);
    const single = await runCli(['faces', 'get', 'ada-out', '--json'], { env: refused });
    expect(single.code).toBe(3);
    const said = (JSON.parse(single.stderr) as { error: { code: string; hint: string } }).error;
    const file = tempFile('refused.ndjson', `${[1, 2, 3, 4, 5, 6].map((n) => doc(`ref-${n}`)).join('\n')}\n`);
    for (const flags of ['', ' --continue-on-error']) {
      const res = await runCli(['docs', 'submit', '--file', file, ...flags.split(' ').filter(Boolean), '--json'], {
        env: refused,
      });
      expect(res.code, res.stderr).toBe(3);
      // A mistyped key: no guess about keys of an earlier run of serve.
      for (const result of resultLines(res.stdout)) {
        expect(result.error).toEqual({
          code: 'not_authenticated',
          message: 'the service refused the API key (401: invalid API key: not a key of this service)',
        });
      }
      // No "or pass --continue-on-error": it would send nothing more with this key.
      const error = (JSON.parse(res.stderr) as { error: { code: string; hint: string } }).error;
      expect(error.code).toBe(said.code);
      expect(error.hint).toBe(
        `${said.hint}, then run \`facectl docs submit --file ${file} --resume${flags} --json\` ` +
          'to send the rest (lines already submitted are not sent again)',
      );
    }
    expect(said).toMatchObject({ code: 'not_authenticated', hint: 'set FACECTL_API_KEY to a new key' });
    expect(storedLabels(service, 'ref-')).toEqual([]);
  });

  it('a key without the scope to submit: exit 6 with its code and fix, as a single command says; no --continue-on-error', async () => {
    // A ring's find: beside a refused key, the other failure every line meets alike still said batch_failed.
    const readOnly = await createKey(service, service.key('pro'), { scopes: ['v1:compile:read'] });
    const file = tempFile('scope.ndjson', `${[1, 2, 3].map((n) => doc(`scope-${n}`)).join('\n')}\n`);
    const res = await runCli(['docs', 'submit', '--file', file, '--json'], {
      env: batchEnv(readOnly.key, service.baseUrl),
    });
    expect(res.code, res.stderr).toBe(6);
    const error = (JSON.parse(res.stderr) as { error: { code: string; hint: string } }).error;
    expect(error.code).toBe('insufficient_scope');
    expect(error.hint).toMatch(/^use a key that has the scope named above: /);
    expect(error.hint).not.toContain('--continue-on-error');
    expect(storedLabels(service, 'scope-')).toEqual([]);
  });

  it('the service unreachable: exit 8 with its fix, and no --continue-on-error (every line would fail alike)', async () => {
    // A ring's find: the hint ended "or pass --continue-on-error to send every valid line".
    const file = tempFile('down.ndjson', `${[1, 2, 3].map((n) => doc(`down-${n}`)).join('\n')}\n`);
    const res = await runCli(['docs', 'submit', '--file', file, '--json'], {
      env: batchEnv(service.key('pro'), await unreachableUrl()),
    });
    expect(res.code, res.stderr).toBe(8);
    const error = (JSON.parse(res.stderr) as { error: { code: string; message: string; hint: string } }).error;
    expect(error.code).toBe('batch_failed');
    expect(error.message).toMatch(/connection refused/);
    expect(error.hint).toMatch(/facectl serve/);
    expect(error.hint).toContain(`then run \`facectl docs submit --file ${file} --resume --json\``);
    expect(error.hint).not.toContain('--continue-on-error');
  });

  it('standard input: a bad first line is exit 2, nothing sent', async () => {
    const before = service.stats.requests;
    const res = await runCli(['docs', 'submit', '--json', '-'], {
      env: env(),
      stdin: `{"alias":"ada-out"}\n${doc('first-2')}\n`,
    });
    expect(res.code, res.stderr).toBe(2);
    expect(res.stdout).toBe('');
    const error = (JSON.parse(res.stderr) as { error: { code: string; message: string } }).error;
    expect(error).toMatchObject({ code: 'invalid_input' });
    expect(error.message).toMatch(/^standard input: line 1: content: required/);
    // Nothing was sent: no summary line, only the error.
    expect(res.stderr).not.toContain('Submitted');
    expect(error).not.toHaveProperty('warnings');
    expect(service.stats.requests).toBe(before);
    expect(storedLabels(service, 'first-')).toEqual([]);
  });
});
