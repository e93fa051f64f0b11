import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { type ServeProcess, startServeWithFace } from '../helpers/serve-process.js';
import { call, expectContract } from '../helpers/service.js';

/**
 * The built bin with stdout on a pipe, as in `facectl docs submit ... --json | jq`: a large text
 * document's answer (the service echoes the content) prints exactly as the answer to the same content
 * sent as a JSON document, and the stored content is the input byte for byte.
 */

let service: ServeProcess;
const dir = mkdtempSync(join(tmpdir(), 'facectl-docs-large-'));
const env = () => ({ FACECTL_API_KEY: service.key('pro'), FACECTL_BASE_URL: service.baseUrl });
const TRICKY = 'Ada said "hi" \\ back\\slash\ttab\r\n\u0001\u2028naïve 日本語 🎉🎉 <|endoftext|> "content":null\n';
const normalise = (text: string) =>
  text.replace(/doc_[A-Za-z0-9_-]+/g, 'doc_X').replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, 'TIME');

beforeAll(async () => {
  service = await startServeWithFace();
}, 120_000);
afterAll(async () => {
  await service?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('docs submit of a large text document (built bin, stdout on a pipe)', () => {
  it('--json prints the whole answer, as for the same content sent as a JSON document', async () => {
    // About 3.5 MiB: past every in-memory threshold, many chunks on each side.
    const content = `${TRICKY.repeat(40_000)}end`;
    const textPath = join(dir, 'big.txt');
    writeFileSync(textPath, content);
    const jsonPath = join(dir, 'big.json');
    writeFileSync(jsonPath, JSON.stringify({ alias: 'ada-lovelace', label: 'large', content }));

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
      const stored = expectContract(
        'getDocument',
        await call(service, 'getDocument', { key: service.key('pro'), params: { document_id: printed.document_id } }),
        200,
      ) as { content: string };
      expect(stored.content === content).toBe(true);
    }
  }, 120_000);
});
