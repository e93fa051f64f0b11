import { describe, expect, it } from 'vitest';
import { requestCount, runCommand } from '../helpers/command-harness.js';
import { useService, useTempFiles } from '../helpers/service-suite.js';

/**
 * `docs submit` of a streamed text document: the service echoes the whole document, content included.
 * However that answer is read (whole, or as a stream without holding the content), what the command
 * prints must not change: under --json exactly the document as the service returned it, otherwise the
 * fields without the content. The oracle is the same content submitted as a JSON document, a path that
 * reads and prints the answer whole.
 */

const TRICKY =
  'Ada said "hi" \\ back\\slash\ttab\r\n\u0001\u001f\u007f\u2028\u2029naïve 日本語 🎉🎉 <|endoftext|> "content":null\n';

const service = useService({}, { faces: ['ada-lovelace'] });
const { file } = useTempFiles('facectl-answer-');

/** Ids and times differ from one submission to the next; nothing else may. */
const normalise = (text: string) =>
  text.replace(/doc_[A-Za-z0-9_-]+/g, 'doc_X').replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, 'TIME');

const contents: [string, string][] = [
  ['tricky text over many read chunks', `${TRICKY.repeat(12_000)}end`],
  ['non-ASCII text', `${'Zürich 日本語の文章 한국어 Ελληνικά 🎉 '.repeat(40_000)}`],
  ['a short text', 'short "text"'],
];

describe.each(contents)('docs submit of %s', (_name, content) => {
  const textPath = () => file(`text-${content.length}.txt`, content);
  const jsonPath = () =>
    file(`doc-${content.length}.json`, JSON.stringify({ alias: 'ada-lovelace', label: 'answer', content }));

  it.each([
    ['--json', ['--json']],
    ['without --json', []],
  ])('prints the same as for a JSON document (%s), from a file and stdin', async (_label, flags) => {
    const oracle = await runCommand(service, ['docs', 'submit', '--file', jsonPath(), ...flags]);
    expect(oracle.code, oracle.stderr).toBe(0);
    const text = ['docs', 'submit', '--alias', 'ada-lovelace', '--label', 'answer', '--format', 'text', ...flags];
    const fromFile = await runCommand(service, [...text, '--file', textPath()]);
    const before = requestCount(service);
    const fromStdin = await runCommand(service, [...text, '-'], { stdin: Buffer.from(content, 'utf8') });
    expect(requestCount(service) - before).toBe(1);
    for (const res of [fromFile, fromStdin]) {
      expect(res.code, res.stderr).toBe(0);
      expect(normalise(res.stdout)).toBe(normalise(oracle.stdout));
      expect(normalise(res.stderr)).toBe(normalise(oracle.stderr));
    }
    if (flags.includes('--json')) {
      const printed = JSON.parse(fromStdin.stdout) as { content: string; document_id: string };
      expect(printed.content === content).toBe(true);
      expect(service.store.get('documents', printed.document_id)?.content === content).toBe(true);
      // Piped: one line, as JSON.stringify prints it.
      expect(fromStdin.stdout).toBe(`${JSON.stringify(printed)}\n`);
    } else {
      expect(fromFile.stdout).not.toContain('Ada said');
    }
  });
});
