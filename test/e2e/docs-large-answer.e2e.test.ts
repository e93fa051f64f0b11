import { describe, expect, it } from 'vitest';
import { useServe } from '../helpers/hooks.js';
import { runCli } from '../helpers/run-cli.js';
import { tempFile } from '../helpers/temp.js';
import { readBack } from '../helpers/serve-process.js';

/**
 * The built bin with stdout on a pipe, as in `facectl docs submit ... --json | jq`: a large text
 * document's answer (the service echoes the content) prints exactly as the answer to the same content
 * sent as a JSON document, and the stored content is the input byte for byte.
 */

const service = useServe({ face: 'ada-lovelace' });
const env = () => service.env();
const TRICKY = 'Ada said "hi" \\ back\\slash\ttab\r\n\u0001\u2028naïve 日本語 🎉🎉 <|endoftext|> "content":null\n';
const normalise = (text: string) =>
  text.replace(/doc_[A-Za-z0-9_-]+/g, 'doc_X').replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, 'TIME');

describe('docs submit of a large text document (built bin, stdout on a pipe)', () => {
  it('--json prints the whole answer, as for the same content sent as a JSON document', async () => {
    // About 3.5 MiB: past every in-memory threshold, many chunks on each side.
    const content = `${TRICKY.repeat(40_000)}end`;
    const textPath = tempFile('big.txt', content);
    const jsonPath = tempFile('big.json', JSON.stringify({ alias: 'ada-lovelace', label: 'large', content }));

    const oracle = await runCli(['docs', 'submit', '--file', jsonPath, '--json'], { env: env(), timeoutMs: 60_000 });
    expect(oracle.code, oracle.stderr).toBe(0);
    const text = ['docs', 'submit', '--alias', 'ada-lovelace', '--label', 'large', '--format', 'text', '--json'];
    const fromFile = await runCli([...text, '--file', textPath], { env: env(), timeoutMs: 60_000 });
    const fromStdin = await runCli([...text, '-'], { env: env(), stdin: content, timeoutMs: 60_000 });
    for (const res of [fromFile, fromStdin]) {
      expect(res.code, res.stderr).toBe(0);
      const same = normalise(res.stdout) === normalise(oracle.stdout);
      expect(same, `stdout differs (${res.stdout.length} vs ${oracle.stdout.length} chars)`).toBe(true);
      const printed = JSON.parse(res.stdout) as { document_id: string; content: string };
      expect(printed.content === content).toBe(true);
      const stored = (await readBack(service, 'getDocument', { document_id: printed.document_id })) as {
        content: string;
      };
      expect(stored.content === content).toBe(true);
    }
  }, 120_000);

  it('--jq .content prints the content whole: a character cut between two chunks of the answer stays whole', async () => {
    // Three-byte characters after one ASCII byte, about 3 MiB: the answer is read back in chunks, and a
    // chunk's end falls inside a character at nearly every boundary.
    const content = `x${'€'.repeat(1_000_000)}`;
    const textPath = tempFile('euro.txt', content);
    const argv = [
      'docs',
      'submit',
      '--alias',
      'ada-lovelace',
      '--label',
      'euro',
      '--file',
      textPath,
      '--jq',
      '.content',
    ];
    const res = await runCli(argv, { env: env(), timeoutMs: 60_000 });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout.includes('\uFFFD')).toBe(false);
    expect(res.stdout === `${content}\n`, `stdout differs (${res.stdout.length} vs ${content.length + 1} chars)`).toBe(
      true,
    );
  }, 120_000);
});
