import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/**
 * Temporary directories for a test file, removed when the file's tests are done. Each test file loads
 * its own copy of this module, so the hook belongs to that file; it is registered first, so it runs
 * after the file's own afterAll hooks (which stop the processes that used the directories).
 */
const made: string[] = [];

afterAll(() => {
  for (const dir of made.splice(0)) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // left for the system's temporary-file cleanup
    }
  }
});

/** The temporary directory when the tests started: a test may point TMPDIR elsewhere for a while. */
const TEMP_ROOT = tmpdir();

export function makeTempDir(prefix: string): string {
  const dir = mkdtempSync(join(TEMP_ROOT, prefix));
  made.push(dir);
  return dir;
}

/** Writes `content` to the file `name` in `dir` (a new temporary directory unless given); returns its path. */
export function tempFile(name: string, content: string | Buffer, dir = makeTempDir('facectl-file-')): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}
