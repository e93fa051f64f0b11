import { PassThrough } from 'node:stream';
import { expect, it } from 'vitest';
import type { InputStream, OutputStream } from '../../src/context.js';
import { createPrompter } from '../../src/io/prompter.js';

// Issue 12, item 13: the key prompt echoed one `*` per character; README says the key is hidden.
it('the key prompt shows neither the key nor one mark per character', async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  let drawn = '';
  let asked: () => void = () => {};
  const shown = new Promise<void>((resolve) => {
    asked = resolve;
  });
  output.on('data', (chunk: Buffer) => {
    drawn += chunk.toString('utf8');
    if (drawn.includes('Paste your API key:')) asked();
  });
  const prompter = createPrompter(
    input as unknown as InputStream,
    output as unknown as OutputStream,
    new AbortController().signal,
  );
  const answer = prompter.password({ message: 'Paste your API key:' });
  await shown;
  for (const char of 'fcs_secret12_abc') input.write(char);
  input.write('\r');
  expect(await answer).toBe('fcs_secret12_abc');
  const visible = drawn.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
  expect(visible).not.toContain('*');
  expect(visible).not.toContain('secret');
});
