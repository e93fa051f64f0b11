import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { ensureBuilt } from '../helpers/serve-process.js';
import { useService } from '../helpers/service-suite.js';
import { batchEnv, batchFile, storedLabels, tempFile } from './support.js';

// A --jq filter that fails on some result lines of a batch: the documents were submitted (and journaled)
// all the same, the other lines' results are printed, the summary stays, and the failure is one error
// naming the line, exit 1, never an uncaught exception.

const service = useService({}, { faces: ['ada-jq'] });
beforeAll(() => ensureBuilt(), 120_000);

const env = () => batchEnv(service.key('pro'), service.baseUrl);
const numbers = (stdout: string) =>
  stdout
    .trimEnd()
    .split('\n')
    .map(Number)
    .sort((a, b) => a - b);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const labels = (prefix: string, count: number) =>
  range(0, count - 1)
    .map((i) => `${prefix}${i}`)
    .sort();
interface ErrorDocument {
  code: string;
  message: string;
  hint?: string;
  warnings?: string[];
}
/** Under --jq (so --json) stderr is one `{"error": ...}` document, never a stack trace. */
const errorOf = (stderr: string): ErrorDocument => {
  expect(stderr).not.toMatch(/^\s+at /m);
  expect(stderr.trimEnd().split('\n')).toHaveLength(1);
  return (JSON.parse(stderr) as { error: ErrorDocument }).error;
};

describe('--jq failing on a batch result line', () => {
  it('on line 100 of 300: the other 299 results printed, exit 1 naming line 100, each document stored once', async () => {
    const { file } = batchFile('ada-jq', 'jqa-', 300);
    const runEnv = env();
    const args = ['docs', 'submit', '--file', file, '--jq', 'if .line == 100 then error("x") else .line end'];
    const res = await runCli(args, { env: runEnv });
    expect(res.code, res.stderr).toBe(1);
    expect(numbers(res.stdout)).toEqual(range(1, 300).filter((n) => n !== 100));
    const error = errorOf(res.stderr);
    expect(error).toMatchObject({ code: 'jq_error', message: '--jq: line 100: x' });
    // The command to paste: this batch's own --resume, without the filter that failed (it would fail again).
    expect(error.hint).toBe(
      'the documents were submitted all the same (the summary counts them). Fix the filter, then run ' +
        `\`facectl docs submit --file ${file} --resume --json\` ` +
        'adding --jq with the fixed filter, to print every result again, sending nothing twice',
    );
    expect(error.warnings).toContainEqual(expect.stringMatching(/^Submitted 300 of 300 documents\./));
    expect(storedLabels(service, 'jqa-')).toEqual(labels('jqa-', 300));
    // A plain run is refused (a new batch would make every document again), saying that all were sent.
    const plain = await runCli(['docs', 'submit', '--file', file, '--json'], { env: runEnv });
    expect(plain.code).toBe(2);
    expect(errorOf(plain.stderr)).toMatchObject({
      code: 'unfinished_batch',
      message: `an earlier batch of ${file} submitted all 300 of its documents but stopped before printing every result`,
      hint: expect.stringMatching(
        /^pass --resume to print every result, sending nothing again; --restart sends every line again: the 300 lines already submitted are created again, as duplicates \(the record is /,
      ),
    });
    // Every document was journaled: --resume sends none again.
    const again = await runCli([...args, '--resume'], { env: runEnv });
    expect(errorOf(again.stderr).warnings).toContainEqual(
      expect.stringMatching(/^Submitted 300 of 300 documents \(300 of them by an earlier run, not sent again\)/),
    );
    expect(storedLabels(service, 'jqa-')).toEqual(labels('jqa-', 300));
    // The hint's command, pasted as is: every result printed, nothing sent again.
    const pasted = await runCli(['docs', 'submit', '--file', file, '--resume', '--json'], { env: runEnv });
    expect(pasted.code, pasted.stderr).toBe(0);
    expect(pasted.stdout.trimEnd().split('\n')).toHaveLength(300);
    expect(storedLabels(service, 'jqa-')).toEqual(labels('jqa-', 300));
  });

  it('one line at a time, failing on every 97th: no crash, the 297 others printed, the first failure named', async () => {
    const { file } = batchFile('ada-jq', 'jqb-', 300);
    const filter = 'if .line % 97 == 0 then error("x") else .line end';
    const res = await runCli(['docs', 'submit', '--file', file, '--concurrency', '1', '--jq', filter], {
      env: env(),
    });
    expect(res.code, res.stderr).toBe(1);
    expect(numbers(res.stdout)).toEqual(range(1, 300).filter((n) => n % 97 !== 0));
    expect(errorOf(res.stderr)).toMatchObject({
      code: 'jq_error',
      message: '--jq: line 97: x (and on 2 more lines)',
    });
    expect(storedLabels(service, 'jqb-')).toEqual(labels('jqb-', 300));
  });

  it('on the last line of two: line 1 printed, the summary kept, exit 1 naming line 2', async () => {
    const { file } = batchFile('ada-jq', 'jqc-', 2);
    const res = await runCli(
      ['docs', 'submit', '--file', file, '--jq', 'if .line == 2 then error("no line 2") else .line end'],
      { env: env() },
    );
    expect(res.code, res.stderr).toBe(1);
    expect(res.stdout).toBe('1\n');
    const error = errorOf(res.stderr);
    expect(error).toMatchObject({ code: 'jq_error', message: '--jq: line 2: no line 2' });
    expect(error.warnings).toContainEqual(expect.stringMatching(/^Submitted 2 of 2 documents\./));
    expect(storedLabels(service, 'jqc-')).toEqual(['jqc-0', 'jqc-1']);
  });

  it('a batch of one document: its refused plain run says that document was submitted, in the singular', async () => {
    const { file } = batchFile('ada-jq', 'jqone-', 1);
    const runEnv = env();
    const args = ['docs', 'submit', '--file', file, '--jq', 'error("x")'];
    expect((await runCli(args, { env: runEnv })).code).toBe(1);
    const plain = await runCli(['docs', 'submit', '--file', file, '--json'], { env: runEnv });
    expect(plain.code).toBe(2);
    expect(errorOf(plain.stderr)).toMatchObject({
      code: 'unfinished_batch',
      message: `an earlier batch of ${file} submitted its 1 document but stopped before printing its result`,
      hint: expect.stringMatching(/: the 1 line already submitted is created again, as a duplicate /),
    });
    expect(storedLabels(service, 'jqone-')).toEqual(['jqone-0']);
  });

  it('with a failed line too: that failure decides the error and exit code, the --jq failure said beside it', async () => {
    const doc = (alias: string, label: string) => JSON.stringify({ alias, label, content: label });
    const file = tempFile(
      'jq-and-fail.ndjson',
      `${[doc('ada-jq', 'jqd-1'), doc('nobody-here', 'jqd-2'), doc('ada-jq', 'jqd-3')].join('\n')}\n`,
    );
    const res = await runCli(
      ['docs', 'submit', '--file', file, '--continue-on-error', '--jq', 'if .line == 3 then error("x") else .line end'],
      { env: env() },
    );
    // The missing face's exit code (not found), as without --jq.
    expect(res.code, res.stderr).toBe(4);
    expect(numbers(res.stdout)).toEqual([1, 2]);
    const error = errorOf(res.stderr);
    expect(error).toMatchObject({
      code: 'batch_failed',
      message: expect.stringMatching(/^1 document failed \(line 2: /),
    });
    expect(error.warnings).toContainEqual('warning: --jq: line 3: x');
    expect(storedLabels(service, 'jqd-')).toEqual(['jqd-1', 'jqd-3']);
  });
});
