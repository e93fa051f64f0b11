import { spawn } from 'node:child_process';
import { openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useServe } from '../helpers/hooks.js';
import { BIN, makeConfigDir, ROOT } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp.js';

/**
 * Standard output that cannot take what a command writes: a reader that went away before the answer
 * (`| true`) or a full disk (`> /dev/full`). Found by a breaker: `keys create | true` exited 0 with the
 * only copy of a live key's secret thrown away, and `> /dev/full` ended in Node's uncaught-error dump.
 */

const serve = useServe({ face: 'ada' });

interface Ended {
  code: number | null;
  stderr: string;
}

/** The bin with stdout closed before it writes (`closed`), on /dev/full (`full`), or read (`pipe`). */
function runWith(
  how: 'closed' | 'full' | 'pipe',
  args: string[],
  configDir = makeConfigDir(),
  stateDir = makeTempDir('facectl-out-state-'),
): Promise<Ended & { stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: makeTempDir('facectl-out-home-'),
        NO_COLOR: '1',
        FACECTL_CONFIG_DIR: configDir,
        FACECTL_STATE_DIR: stateDir,
        ...serve.env('pro'),
      },
      stdio: ['ignore', how === 'full' ? openSync('/dev/full', 'w') : 'pipe', 'pipe'],
    });
    if (how === 'closed') child.stdout?.destroy();
    let stderr = '';
    let stdout = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    if (how === 'pipe') child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr, stdout }));
  });
}

describe('keys create: the secret could not be written', () => {
  it.each([
    ['closed', 141, 'standard output was closed'],
    ['full', 1, 'cannot write to standard output: ENOSPC'],
  ] as const)('stdout %s: exit %d, the key named as made and its secret as lost, no dump', async (how, exit, why) => {
    const result = await runWith(how, ['keys', 'create', '--name', `lost-${how}`]);
    expect(result.code).toBe(exit);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      new RegExp(`^error: key key_\\w+ was created, but its secret could not be written: ${why}`),
    );
    expect(lines[1]).toBe(
      'the service will not show it again: create another key, with its output going where it is kept, or with --save',
    );
    expect(result.stderr).not.toMatch(/fcs_/);
  });

  it('with --save the key is kept in the profile: stdout closed is no loss (exit 0)', async () => {
    const configDir = makeConfigDir();
    const result = await runWith('closed', ['keys', 'create', '--name', 'kept', '--save'], configDir);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^Saved key fcs_\w+… in profile "default"/m);
    // The key that made it came from FACECTL_API_KEY, which goes on taking precedence over the one saved.
    expect(result.stderr).toContain(
      'warning: FACECTL_API_KEY is set to another key, which is used instead of the stored one (`unset FACECTL_API_KEY` to use it)',
    );
  });
});

const COMPLETED = 'the command completed; only what it printed was lost';

describe('any command on a full disk', () => {
  it('faces get --json > /dev/full: exit 1, one JSON error naming the write, no dump', async () => {
    const result = await runWith('full', ['faces', 'get', 'ada', '--json']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stderr)).toEqual({
      error: {
        code: 'output_failed',
        message: 'cannot write to standard output: ENOSPC: no space left on device, write',
        hint: COMPLETED,
      },
    });
  });

  it('faces get > /dev/full (TSV): exit 1, one error line', async () => {
    const result = await runWith('full', ['faces', 'get', 'ada']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `error: cannot write to standard output: ENOSPC: no space left on device, write\n${COMPLETED}\n`,
    );
  });

  it('threads create > /dev/full: exit 1, naming the thread made all the same (its id was lost with the output)', async () => {
    const result = await runWith('full', ['threads', 'create', '--alias', 'ada', '--label', 'lost-output']);
    expect(result.code).toBe(1);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe('error: cannot write to standard output: ENOSPC: no space left on device, write');
    const [, id] =
      /^the thread was created all the same: (thr_\w+) \(`facectl threads get thr_\w+`\); creating again makes another$/.exec(
        lines[1] ?? '',
      ) ?? [];
    expect(lines).toHaveLength(2);
    // The id said is the thread's: the service holds it, under the label given.
    const answer = await fetch(`${serve.baseUrl}/v1/compile/threads/${id}`, {
      headers: { authorization: `Bearer ${serve.key('pro')}` },
    });
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { label: string }).label).toBe('lost-output');
  });

  it('faces create --json > /dev/full: the JSON error names the face made', async () => {
    const result = await runWith('full', ['faces', 'create', '--name', 'Lost', '--alias', 'lost-face', '--json']);
    expect(result.code).toBe(1);
    const { error } = JSON.parse(result.stderr) as { error: { code: string; hint: string } };
    expect(error.code).toBe('output_failed');
    expect(error.hint).toMatch(
      /^the face was created all the same: lost-face \(face_\w+\) \(`facectl faces get lost-face`\)$/,
    );
  });
});

describe('docs submit of a text document, --json > /dev/full', () => {
  it('exit 1, output_failed naming the document made (it said internal_error, with no id)', async () => {
    const file = join(makeTempDir('facectl-out-text-'), 'note.txt');
    writeFileSync(file, 'a text document\n');
    const result = await runWith('full', [
      'docs',
      'submit',
      '--file',
      file,
      '--alias',
      'ada',
      '--label',
      'lost-text',
      '--json',
    ]);
    expect(result.code).toBe(1);
    const { error } = JSON.parse(result.stderr) as { error: { code: string; message: string; hint: string } };
    expect(error.code).toBe('output_failed');
    expect(error.message).toBe('cannot write to standard output: ENOSPC: no space left on device, write');
    const [, id] =
      /^the document was created all the same: (doc_\w+) \(`facectl docs get doc_\w+`\)/.exec(error.hint) ?? [];
    const answer = await fetch(`${serve.baseUrl}/v1/compile/documents/${id}`, {
      headers: { authorization: `Bearer ${serve.key('pro')}` },
    });
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { label: string }).label).toBe('lost-text');
  });
});

describe('a create whose output pipe closed before it printed (`| true`)', () => {
  it.each([
    [
      ['threads', 'create', '--alias', 'ada', '--label', 'closed-thread'],
      /^the thread was created all the same: thr_\w+ /,
    ],
    [
      ['faces', 'create', '--name', 'Closed', '--alias', 'closed-face'],
      /^the face was created all the same: closed-face \(face_\w+\)/,
    ],
    [
      ['docs', 'submit', '--content', 'x', '--alias', 'ada', '--label', 'closed-doc', '--json'],
      /^the document was created all the same: doc_\w+ /,
    ],
  ])('%j: exit 141, what was made said on stderr (it exited 0, the id printed nowhere)', async (args, made) => {
    const result = await runWith('closed', args);
    expect(result.code).toBe(141);
    const lines = result.stderr.trimEnd().split('\n');
    if (args.includes('--json')) {
      const { error } = JSON.parse(lines.at(-1) as string) as { error: { code: string; hint: string } };
      expect(error.code).toBe('output_closed');
      expect(error.hint).toMatch(made);
    } else {
      expect(lines.at(-2)).toBe('error: standard output was closed');
      expect(lines.at(-1)).toMatch(made);
    }
  });

  it('a command that only reads still exits 0, saying nothing', async () => {
    const result = await runWith('closed', ['faces', 'get', 'ada']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
  });
});

describe('a batch whose output goes to a full disk', () => {
  it('stops: exit 1, output_failed (not "interrupted"), the --resume command; the resume sends only the rest', async () => {
    const dir = makeTempDir('facectl-out-batch-');
    const file = join(dir, 'batch.ndjson');
    const lines = Array.from({ length: 40 }, (_, i) =>
      JSON.stringify({ alias: 'ada', label: `full-${i}`, content: `doc ${i}` }),
    );
    writeFileSync(file, `${lines.join('\n')}\n`);
    const [configDir, stateDir] = [makeConfigDir(), makeTempDir('facectl-out-state-')];
    const result = await runWith('full', ['docs', 'submit', '--file', file, '--json'], configDir, stateDir);
    expect(result.code).toBe(1);
    const { error } = JSON.parse(result.stderr.trim().split('\n').at(-1) as string) as {
      error: { code: string; message: string; hint: string };
    };
    expect(error.code).toBe('output_failed');
    // The first result's failed write stops the batch; all 40 may have been answered before it is known.
    if (error.message.endsWith(', write')) {
      expect(error.hint).toBe(
        'The batch had finished: every document was submitted and recorded; nothing is left to resume (--resume prints the results again, sending nothing)',
      );
    } else {
      expect(error.message).toMatch(
        /^cannot write to standard output: ENOSPC: no space left on device, write: \d+ of 40 documents were submitted/,
      );
      expect(error.hint).toContain(`--file ${file} --resume`);
    }
    // Resumed: the lines recorded are not sent again, the others are, each once; every result printed.
    const before = await serve.settledRequests();
    const resumed = await runWith('pipe', ['docs', 'submit', '--file', file, '--resume'], configDir, stateDir);
    expect(resumed.code, resumed.stderr).toBe(0);
    const [, earlier = '40'] =
      /Submitted 40 of 40 documents \((\d+) of them by an earlier run, not sent again\)/.exec(resumed.stderr) ?? [];
    if (earlier === '40') expect(resumed.stderr).toContain('batch already finished: 40 documents sent; nothing to do');
    expect(Number(earlier)).toBeGreaterThan(0);
    expect((await serve.settledRequests()) - before).toBe(40 - Number(earlier));
    expect(resumed.stdout.trim().split('\n')).toHaveLength(40);
  });
});

describe('standard error whose reader went away (`2>&1 | head -c 5`)', () => {
  it('keeps the exit code the error has (a ring found 1 for every error, from an unhandled EPIPE)', async () => {
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(process.execPath, [BIN, 'faces', 'get', 'nosuch', '--base-url', 'http://127.0.0.1:9'], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: makeTempDir('facectl-out-home-'),
          FACECTL_CONFIG_DIR: makeConfigDir(),
          FACECTL_API_KEY: 'fc_test_key',
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      child.stderr?.destroy();
      child.on('error', reject);
      child.on('close', (exit) => resolve(exit));
    });
    // Nothing listens on port 9: the network error's code, as with stderr open.
    expect(code).toBe(8);
  });
});
