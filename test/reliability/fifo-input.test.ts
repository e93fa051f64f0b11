import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFace, startTestService, type TestService } from '../helpers/service.js';
import { batchEnv, ensureBuilt, start, storedLabels, tempDir } from './support.js';

// A --file that is not a regular file (a named pipe here) is read once, as standard input is, and
// SIGTERM ends the command even while it waits on such a file.

let service: TestService;
let key: string;

beforeAll(async () => {
  ensureBuilt();
  service = await startTestService();
  key = service.key('pro');
  await createFace(service, key, 'ada-fifo');
});

afterAll(async () => {
  await service?.close();
});

function fifo(): string {
  const path = join(tempDir(), 'input.fifo');
  execFileSync('mkfifo', [path]);
  return path;
}

describe('--file naming a FIFO', () => {
  it('a writer that writes three lines and exits -> the three documents are submitted, each once', async () => {
    const path = fifo();
    const lines = [0, 1, 2].map((i) => JSON.stringify({ alias: 'ada-fifo', label: `fifo-${i}`, content: `line ${i}` }));
    // The writer blocks in open() until facectl opens the FIFO for reading, writes, and exits.
    const writer = spawn('sh', ['-c', 'printf "%s\\n" "$1" "$2" "$3" > "$4"', 'sh', ...lines, path], {
      stdio: 'ignore',
    });
    const run = start(['docs', 'submit', '--file', path, '--json'], batchEnv(key, service.baseUrl));
    const { code } = await run.exit;
    writer.kill('SIGKILL');
    expect(code, run.stderr()).toBe(0);
    expect(run.stdout().trim().split('\n')).toHaveLength(3);
    expect(storedLabels(service, 'fifo-')).toEqual(['fifo-0', 'fifo-1', 'fifo-2']);
  });

  it('a writer that writes nothing, or only blank lines, and a batch on empty standard input -> exit 2, nothing sent or recorded', async () => {
    // As an empty or blank file is refused: no "Submitted 0 documents" and exit 0, no finished batch record.
    const before = service.stats.requests;
    for (const [content, stdin] of [
      ['', undefined],
      ['\\n\\n', undefined],
      [undefined, ''],
      [undefined, '\n'],
    ] as const) {
      const env = batchEnv(key, service.baseUrl);
      let run;
      let writer;
      if (content !== undefined) {
        const path = join(tempDir(), 'batch.ndjson');
        execFileSync('mkfifo', [path]);
        writer = spawn('sh', ['-c', 'printf "$1" > "$2"', 'sh', content, path], { stdio: 'ignore' });
        run = start(['docs', 'submit', '--file', path, '--json'], env);
      } else {
        run = start(['docs', 'submit', '-', '--format', 'ndjson', '--json'], env, stdin);
      }
      const { code } = await run.exit;
      writer?.kill('SIGKILL');
      expect(code, run.stderr()).toBe(2);
      expect(run.stdout()).toBe('');
      expect(JSON.parse(run.stderr()).error.message).toMatch(/^(standard input|\/.*batch\.ndjson) holds no documents$/);
      const batches = join(env.FACECTL_CONFIG_DIR, 'state', 'batches');
      expect(existsSync(batches) ? readdirSync(batches) : []).toEqual([]);
    }
    expect(service.stats.requests).toBe(before);
  });

  it('a bad second line stops the batch -> exit 1, and the hint names the FIFO, not standard input', async () => {
    const path = fifo();
    const good = JSON.stringify({ alias: 'ada-fifo', label: 'badfifo-0', content: 'first' });
    const writer = spawn('sh', ['-c', 'printf "%s\\n{bad\\n" "$1" > "$2"', 'sh', good, path], { stdio: 'ignore' });
    const run = start(['docs', 'submit', '--file', path], batchEnv(key, service.baseUrl));
    const { code } = await run.exit;
    writer.kill('SIGKILL');
    expect(code, run.stderr()).toBe(1);
    expect(run.stderr()).toContain(`error: ${path}: line 2, column 2: invalid JSON`);
    expect(run.stderr()).toContain(`(${path} is read once, so its lines are checked as they are sent)`);
    expect(run.stderr()).not.toContain('standard input');
    expect(storedLabels(service, 'badfifo-')).toEqual(['badfifo-0']);
  });

  it('SIGTERM while no writer has come -> exit 143, nothing sent', async () => {
    const path = fifo();
    const before = service.stats.requests;
    const run = start(['docs', 'submit', '--file', path, '--json'], batchEnv(key, service.baseUrl));
    // Let it reach the FIFO (it has nothing to print while it waits there).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    run.child.kill('SIGTERM');
    const { code } = await run.exit;
    expect(code, run.stderr()).toBe(143);
    expect(service.stats.requests).toBe(before);
  });

  it('SIGTERM while a writer holds the FIFO open, idle after one line -> exit 143', async () => {
    const path = fifo();
    const line = JSON.stringify({ alias: 'ada-fifo', label: 'fifo-idle', content: 'idle' });
    // A writer that stays, idle, after its one line: the read waits for more.
    const writer = spawn('sh', ['-c', 'exec 3>"$2"; printf "%s\\n" "$1" >&3; exec sleep 30', 'sh', line, path], {
      stdio: 'ignore',
    });
    try {
      const run = start(['docs', 'submit', '--file', path, '--json'], batchEnv(key, service.baseUrl));
      await new Promise((resolve) => setTimeout(resolve, 1500));
      run.child.kill('SIGTERM');
      const { code } = await run.exit;
      expect(code, run.stderr()).toBe(143);
    } finally {
      writer.kill('SIGKILL');
    }
  });
});
