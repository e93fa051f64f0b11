import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/run-cli.js';
import { ensureBuilt } from '../helpers/serve-process.js';

// Issue 12 item 12: the demo printed each command's stdout before its stderr (progress after the
// results, the authorize URL after "connected true") and never said who approved the connection.

let output = '';
beforeAll(async () => {
  ensureBuilt();
  const result = await promisify(execFile)(process.execPath, [join(ROOT, 'scripts', 'demo.mjs')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', NO_COLOR: '1' },
    maxBuffer: 16 * 1024 * 1024,
  });
  output = result.stdout;
}, 180_000);

/** The block of output a command printed, from its `$ ` line to the next one. */
function block(command: string): string {
  const start = output.indexOf(`$ ${command}`);
  expect(start, `no "$ ${command}" in the demo output`).toBeGreaterThanOrEqual(0);
  const end = output.indexOf('\n$ ', start + 1);
  return output.slice(start, end === -1 ? undefined : end);
}

function inOrder(text: string, parts: string[]): void {
  const at = parts.map((part) => text.indexOf(part));
  expect({ parts, at: at.map((i) => i >= 0) }).toEqual({ parts, at: parts.map(() => true) });
  expect([...at].sort((a, b) => a - b)).toEqual(at);
}

describe('npm run demo', () => {
  it('finishes', () => {
    expect(output).toContain('Demo finished');
  });

  it('shows the authorize URL, then who approved it, then the connection', () => {
    inOrder(block('facectl oauth connect example'), [
      'Open this URL in a browser to connect example:',
      '/provider/example/authorize?',
      '[demo, as your browser] approving on example',
      'account connect@facectl.local, clicked Approve',
      'connected\ttrue',
    ]);
  });

  it('shows progress before the result it leads to', () => {
    // Result lines are written as they come, so only the first progress line surely precedes them.
    inOrder(block('facectl docs submit --file batch.ndjson'), ['Submitting: 1/3', '\tdoc_', 'Submitted 3 of 3']);
    inOrder(block('facectl docs sync doc_'), ['Preparing: 1/1 ready', 'document_id\tdoc_']);
  });
});
