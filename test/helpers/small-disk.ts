import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN } from './run-cli.js';
import { type ServeProcess, startServeProcess } from './serve-process.js';

/**
 * A disk that runs out of room when a test says so, under `facectl serve --data` processes (issue 21:
 * ENOSPC, EFBIG). Two ways, so that a test always runs, whatever the machine allows:
 *
 * - `tmpfs`: a small tmpfs mounted for the test (root, where the container lets mount work); full
 *   means a filler file takes all the room left (ENOSPC), free means it is removed.
 * - `ulimit`: the serve process's file size limit (RLIMIT_FSIZE: `ulimit -f` at its start, `prlimit`
 *   to change it while it runs), SIGXFSZ ignored, so a write past the limit fails with EFBIG; full means
 *   the limit is just above the largest file serve has (a write may be cut part way), free means none.
 */
export interface SmallDisk {
  readonly kind: 'tmpfs' | 'ulimit';
  /** Where the data file goes. */
  readonly dir: string;
  /** `facectl serve --data FILE` on this disk (FILE inside `dir`); `fsizeBytes`: a limit from the start (ulimit only). */
  start(file: string, fsizeBytes?: number): Promise<ServeProcess>;
  /** No room left for the process `pid` (tmpfs: for everyone). */
  fill(pid: number): void;
  /** Room again. */
  free(pid: number): void;
  cleanup(): void;
}

/** A small tmpfs if one can be mounted here, else the file size limit. `prefer` forces one (tests of both). */
export function smallDisk(prefer?: 'tmpfs' | 'ulimit', sizeMib = 16): SmallDisk {
  const dir = mkdtempSync(join(tmpdir(), 'facectl-disk-'));
  if (prefer !== 'ulimit' && mountTmpfs(dir, sizeMib)) return tmpfsDisk(dir);
  if (prefer === 'tmpfs') throw new Error('a tmpfs cannot be mounted here');
  return ulimitDisk(dir);
}

function mountTmpfs(dir: string, sizeMib: number): boolean {
  if (process.getuid?.() !== 0) return false;
  const result = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMib}m,mode=0700`, 'tmpfs', dir], {
    stdio: 'ignore',
  });
  return result.status === 0;
}

function tmpfsDisk(dir: string): SmallDisk {
  const filler = join(dir, 'filler');
  return {
    kind: 'tmpfs',
    dir,
    start: (file) => startServeProcess(['--data', file]),
    fill() {
      const fd = openSync(filler, 'a');
      const block = Buffer.alloc(64 * 1024, 1);
      try {
        for (;;) writeSync(fd, block);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      }
      // The last block's room, byte by byte: nothing at all is left.
      try {
        for (;;) writeSync(fd, block, 0, 1);
      } catch {
        // full
      } finally {
        closeSync(fd);
      }
    },
    free() {
      rmSync(filler, { force: true });
    },
    cleanup() {
      spawnSync('umount', ['-l', dir], { stdio: 'ignore' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function ulimitDisk(dir: string): SmallDisk {
  // The soft limit only: raising a hard one back needs a privilege containers often drop.
  const limit = (pid: number, bytes: number | 'unlimited') =>
    execFileSync('prlimit', ['--pid', String(pid), `--fsize=${bytes}:`], { stdio: 'pipe' });
  const largest = () => Math.max(0, ...readdirSync(dir).map((name) => statSync(join(dir, name)).size));
  return {
    kind: 'ulimit',
    dir,
    start: (file, fsizeBytes) => {
      // POSIX sh counts `ulimit -f` in 512-byte blocks.
      const blocks = fsizeBytes === undefined ? 'unlimited' : String(Math.max(1, Math.floor(fsizeBytes / 512)));
      const script = `trap '' XFSZ; ulimit -S -f ${blocks}; exec "$0" "$@"`;
      return startServeProcess(['--data', file], ['/bin/sh', '-c', script, process.execPath, BIN]);
    },
    // A little above the largest file: a write may begin, and then fail part way (EFBIG).
    fill: (pid) => limit(pid, largest() + 4096),
    free: (pid) => limit(pid, 'unlimited'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
