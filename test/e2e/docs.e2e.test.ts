import { spawn } from 'node:child_process';
import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, ROOT, runCli } from '../helpers/run-cli.js';
import { worldReadableCli } from '../helpers/world-readable-cli.js';
import { useServe } from '../helpers/hooks.js';
import { makeTempDir, tempFile } from '../helpers/temp.js';
import { readBack } from '../helpers/serve-process.js';
import { shellStatus } from '../helpers/watch-child.js';

/** docs submit / get / sync, run as the built bin against `facectl serve`, in script and pipe forms. */

const service = useServe({ face: 'ada-lovelace' });
const dir = makeTempDir('facectl-docs-e2e-');
const env = () => service.env();
const stored = (id: string) => readBack(service, 'getDocument', { document_id: id });

describe('docs submit (built bin)', () => {
  it('pipe form: text on stdin', async () => {
    const result = await runCli(
      ['docs', 'submit', '--alias', 'ada-lovelace', '--label', 'piped text', '-', '--json', '--no-input'],
      {
        env: env(),
        stdin: 'Notes on "the engine" — ünïcödé ✓\n',
      },
    );
    expect(result.code, result.stderr).toBe(0);
    const doc = JSON.parse(result.stdout);
    expect(await stored(doc.document_id)).toMatchObject({
      content: 'Notes on "the engine" — ünïcödé ✓\n',
      label: 'piped text',
    });
    expect(result.stderr).toContain('is a preview: nothing is charged until sync');
  });

  it('pipe form: one JSON document on stdin', async () => {
    const result = await runCli(['docs', 'submit', '-', '--json'], {
      env: env(),
      stdin: JSON.stringify({
        alias: 'ada-lovelace',
        label: 'json doc',
        content: 'From JSON',
        perspective: 'first-person',
      }),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(await stored(JSON.parse(result.stdout).document_id)).toMatchObject({
      content: 'From JSON',
      label: 'json doc',
    });
  });

  it('pipe form: NDJSON on stdin, one result line each', async () => {
    const lines = ['one', 'two', 'three'].map((c) => JSON.stringify({ label: `nd-${c}`, content: `content ${c}` }));
    const result = await runCli(
      ['docs', 'submit', '--alias', 'ada-lovelace', '-', '--concurrency', '2', '--json', '--no-input'],
      {
        env: env(),
        stdin: `${lines.join('\n')}\n`,
      },
    );
    expect(result.code, result.stderr).toBe(0);
    const results = result.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l))
      .sort((a, b) => a.line - b.line);
    expect(results.map((r) => r.line)).toEqual([1, 2, 3]);
    for (const [i, r] of results.entries()) {
      expect(r.ok).toBe(true);
      expect((await stored(r.document_id)).content).toBe(`content ${['one', 'two', 'three'][i]}`);
    }
    expect(result.stderr).toContain('Submitted 3 documents.');
  });

  it('script form: an NDJSON file; a bad line in the middle means nothing of it is sent', async () => {
    const good = tempFile(
      'good.ndjson',
      `${JSON.stringify({ alias: 'ada-lovelace', label: 'f1', content: 'file one' })}\n`.repeat(3),
    );
    const ok = await runCli(['docs', 'submit', '--file', good, '--json', '--no-input'], { env: env() });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout.trimEnd().split('\n')).toHaveLength(3);

    const bad = tempFile(
      'bad.ndjson',
      `${JSON.stringify({ alias: 'ada-lovelace', label: 'b1', content: 'x' })}\n{"alias": "ada-lovelace", "label": "b2", "content": }\n${JSON.stringify({ alias: 'ada-lovelace', label: 'b3', content: 'y' })}\n`,
    );
    const before = await service.settledRequests();
    const refused = await runCli(['docs', 'submit', '--file', bad, '--json', '--no-input'], { env: env() });
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    // Under --json, stderr is the one JSON error document.
    const { error } = JSON.parse(refused.stderr);
    expect(error.message).toContain(`${bad}: line 2, column 53: invalid JSON`);
    expect(`${error.message} ${error.hint}`).toContain('nothing was sent');
    expect(error.code).toBe('invalid_input');
    expect(await service.settledRequests()).toBe(before);
  });

  it('errors of input files are exit 2 naming the path; a terminal-less empty stdin is refused', async () => {
    const missing = join(dir, 'nope.txt');
    const result = await runCli(['docs', 'submit', '--alias', 'ada-lovelace', '--label', 'l', '--file', missing], {
      env: env(),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`error: cannot read ${missing}: no such file`);
    const empty = await runCli(['docs', 'submit', '--alias', 'ada-lovelace', '--label', 'l', '-'], {
      env: env(),
      stdin: '',
    });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('error: standard input is empty');
  });

  it('an unreadable file (mode 000, run as an unprivileged user) is exit 2 naming the path', async () => {
    // As root every file is readable, so the bin runs as "nobody" there, from a copy that user can read
    // (the clone may be in a private directory); otherwise as the current user.
    const asRoot = process.getuid?.() === 0;
    const cli = asRoot ? await worldReadableCli() : { node: process.execPath, bin: BIN, dir };
    const secret = tempFile('secret.txt', 'hidden', cli.dir);
    chmodSync(secret, 0o000);
    const asNobody = asRoot ? { uid: 65534, gid: 65534 } : {};
    const child = spawn(
      cli.node,
      [cli.bin, 'docs', 'submit', '--alias', 'ada-lovelace', '--label', 'l', '--file', secret],
      {
        cwd: cli.dir,
        env: {
          PATH: process.env.PATH,
          HOME: '/tmp',
          NO_COLOR: '1',
          ...env(),
          FACECTL_CONFIG_DIR: join(cli.dir, 'cfg-nobody'),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
        ...asNobody,
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toContain(`error: cannot read ${secret}: permission denied`);
    expect(code).toBe(2);
  });
});

describe('docs submit from a working directory that was removed (built bin)', () => {
  it('a batch from a file given by its absolute path: exit 2 saying so, nothing sent', async () => {
    const file = tempFile('gone-cwd.ndjson', '{"alias":"ada-lovelace","label":"g","content":"x"}\n', dir);
    const gone = join(dir, 'gone');
    const script = `mkdir -p '${gone}' && cd '${gone}' && rmdir '${gone}' && exec "$0" '${BIN}' docs submit --file '${file}' --json`;
    const child = spawn('sh', ['-c', script, process.execPath], { env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code, stderr).toBe(2);
    expect(stdout).toBe('');
    expect(JSON.parse(stderr).error).toMatchObject({
      code: 'no_working_directory',
      message: 'the working directory was removed',
    });
  });
});

describe('docs submit: Ctrl-C (built bin)', () => {
  it('SIGINT while the stdin pipe is idle: exit 130 at once, with how far it got', async () => {
    const child = spawn(process.execPath, [BIN, 'docs', 'submit', '--alias', 'ada-lovelace', '-', '--json'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: '/tmp',
        NO_COLOR: '1',
        ...env(),
        FACECTL_CONFIG_DIR: join(dir, 'cfg'),
        FACECTL_STATE_DIR: join(dir, 'state'),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('close', (code, signal) => resolve({ code, signal })),
    );
    // Two lines, then the writer goes quiet with the pipe still open.
    child.stdin.write(
      `${JSON.stringify({ label: 'sigint-1', content: 'one' })}\n${JSON.stringify({ label: 'sigint-2', content: 'two' })}\n`,
    );
    const deadline = Date.now() + 15_000;
    while (stdout.split('\n').length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    child.kill('SIGINT');
    const { code, signal } = await exited;
    child.stdin.destroy();
    // Ended by SIGINT itself, after its messages: a shell's $? is 130, and a loop around it stops.
    expect(shellStatus(code, signal)).toBe(130);
    expect(signal).toBe('SIGINT');
    expect(
      stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).ok),
    ).toEqual([true, true]);
    expect(JSON.parse(stderr).error.message).toContain('interrupted: 2 documents were submitted');
  });
});

describe('docs get and sync (built bin)', () => {
  it('sync --wait follows preparation to ready; get shows the synced document', async () => {
    const submitted = await runCli(
      ['docs', 'submit', '--alias', 'ada-lovelace', '--label', 'to sync', '--content', 'word '.repeat(2100), '--json'],
      { env: env() },
    );
    const id = JSON.parse(submitted.stdout).document_id as string;
    const synced = await runCli(['docs', 'sync', id, '--wait', '--timeout', '30', '--json', '--no-input'], {
      env: env(),
    });
    expect(synced.code, synced.stderr).toBe(0);
    const doc = JSON.parse(synced.stdout);
    expect(doc).toMatchObject({
      document_id: id,
      synced: true,
      prepare_status: 'ready',
      chunks_total: 3,
      chunks_completed: 3,
    });
    // Not a terminal and --json: no progress drawing on stderr.
    expect(synced.stderr).not.toContain('Preparing');
    const got = await runCli(['docs', 'get', id], { env: env() });
    expect(got.code).toBe(0);
    expect(got.stdout).toContain('synced\ttrue\n');
    expect(got.stdout).toContain('prepare_status\tready\n');
    expect((await stored(id)).synced).toBe(true);
  });

  it('an unknown document is exit 4', async () => {
    const result = await runCli(['docs', 'get', 'doc_nothing', '--json'], { env: env() });
    expect(result.code).toBe(4);
    expect(JSON.parse(result.stderr.trimEnd().split('\n').at(-1) as string).error.status).toBe(404);
  });
});
