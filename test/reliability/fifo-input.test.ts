import { execFileSync, spawn } from 'node:child_process';
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
