import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/serve-process.js';
import { useService } from '../helpers/service-suite.js';
import { runCli } from '../helpers/run-cli.js';
import { batchEnv, resultLines, stored, storedLabels, tempFile } from './support.js';

// The extension names the kind: a file named *.ndjson or *.jsonl is an NDJSON batch even of one line
// (one result line per document); standard input and other names are detected as before.

const service = useService({}, { faces: ['ada-named'] });
beforeAll(() => ensureBuilt(), 120_000);

const doc = (label: string) => JSON.stringify({ alias: 'ada-named', label, content: `${label} ✓` });
const env = () => batchEnv(service.key('pro'), service.baseUrl);

describe('a file named *.ndjson or *.jsonl is a batch whatever its line count', () => {
  it('one line in .ndjson (--json): one result line, the document stored once', async () => {
    const file = tempFile('one.ndjson', `${doc('one-ndjson')}\n`);
    const res = await runCli(['docs', 'submit', '--file', file, '--json'], { env: env() });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout.split('\n')).toHaveLength(2);
    const [result] = resultLines(res.stdout);
    const [created] = stored(service, 'one-ndjson');
    expect(result).toEqual({ line: 1, ok: true, document_id: created?.id, token_count: expect.any(Number) });
    expect(res.stderr).toContain('Submitted 1 of 1 document.');
    expect(storedLabels(service, 'one-ndjson')).toEqual(['one-ndjson']);
  });

  it('one line in .jsonl, no trailing newline, --resume taken as a batch: the tab-separated result line', async () => {
    const file = tempFile('one.jsonl', doc('one-jsonl'));
    const runEnv = env();
    // A batch: --resume looks for its record (none: refused, nothing sent), not "--resume applies to a batch".
    const nothing = await runCli(['docs', 'submit', '--file', file, '--resume'], { env: runEnv });
    expect(nothing.code, nothing.stderr).toBe(2);
    expect(nothing.stderr).toContain(`error: nothing to resume: no batch of ${file} is recorded in `);
    expect(stored(service, 'one-jsonl')).toEqual([]);
    const res = await runCli(['docs', 'submit', '--file', file], { env: runEnv });
    expect(res.code, res.stderr).toBe(0);
    const [created] = stored(service, 'one-jsonl');
    expect(res.stdout).toMatch(new RegExp(`^1\\t${created?.id}\\t\\d+\\n$`));
    expect(storedLabels(service, 'one-jsonl')).toEqual(['one-jsonl']);
  });

  it('the same line in a .json file (or on standard input) is still one JSON document', async () => {
    for (const [label, stdin] of [
      ['one-json-file', undefined],
      ['one-json-stdin', `${doc('one-json-stdin')}\n`],
    ] as const) {
      const args = stdin === undefined ? ['--file', tempFile('one.json', `${doc(label)}\n`)] : ['-'];
      const res = await runCli(['docs', 'submit', ...args, '--json'], { env: env(), ...(stdin ? { stdin } : {}) });
      expect(res.code, res.stderr).toBe(0);
      const answer = JSON.parse(res.stdout) as { document_id: string; label: string; content: string };
      expect(answer).toMatchObject({ label, content: `${label} ✓` });
      expect(storedLabels(service, label)).toEqual([label]);
    }
  });

  it('a bad single line in .ndjson is refused naming the line (exit 2), nothing sent', async () => {
    const file = tempFile('bad.ndjson', 'just some text\n');
    const before = service.stats.requests;
    const res = await runCli(['docs', 'submit', '--file', file], { env: env() });
    expect(res.code, res.stderr).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain(`${file}: line 1, column 1: invalid JSON`);
    expect(service.stats.requests).toBe(before);
  });
});
