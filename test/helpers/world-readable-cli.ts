import { spawn } from 'node:child_process';
import { accessSync, chmodSync, constants, copyFileSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, parse } from 'node:path';
import { build } from 'esbuild';
import { BIN, ROOT } from './run-cli.js';
import { makeTempDir } from './temp.js';

/**
 * A copy of the built CLI (and, when needed, of the node binary) that another user can run, for tests
 * that run facectl as an unprivileged user. The clone may sit in a private directory (mode 0700, as
 * `mktemp -d` and home directories are) where that user can read nothing, so the CLI is bundled into
 * one file in a world-readable temporary directory; the node binary is copied beside it when one of
 * its parent directories is closed to others (Node 24 unpacked into a private scratch folder by CI).
 */
export interface WorldReadableCli {
  /** The node binary to spawn. */
  node: string;
  /** The bundled entry point: `node <bin> args...`. */
  bin: string;
  /** The world-readable directory holding them. */
  dir: string;
}

export async function worldReadableCli(): Promise<WorldReadableCli> {
  const dir = makeTempDir('facectl-shared-cli-');
  chmodSync(dir, 0o755);
  if (!openToOthers(dir)) throw new Error(`${dir} is not reachable by other users; set TMPDIR to a directory that is`);
  const bin = join(dir, 'facectl.mjs');
  const entry = join(dir, 'entry.mjs');
  writeFileSync(
    entry,
    `import { runProcess } from ${JSON.stringify(join(ROOT, 'dist', 'run.js'))};\nprocess.exitCode = await runProcess(process.argv.slice(2));\n`,
  );
  await build({
    entryPoints: [entry],
    outfile: bin,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'error',
    // Only `serve` and the browser opener load these; the copy is for the client's commands.
    external: ['gpt-tokenizer', 'gpt-tokenizer/*', 'open'],
  });
  chmodSync(bin, 0o644);
  let node = process.execPath;
  if (!openToOthers(node)) {
    const binDir = join(dir, 'node-bin');
    mkdirSync(binDir, { mode: 0o755 });
    node = join(binDir, 'node');
    copyFileSync(process.execPath, node);
    chmodSync(node, 0o755);
  }
  return { node, bin, dir };
}

/**
 * The bin as an unprivileged user: as root (who opens any directory) uid 65534 from a copy it can read, else this
 * user. `dir` is a directory of its own; `run` gives the environment it is given and PATH, NO_COLOR, HOME=dir.
 */
export async function unprivilegedCli() {
  const asRoot = process.getuid?.() === 0;
  const cli = asRoot ? await worldReadableCli() : { node: process.execPath, bin: BIN, dir: makeTempDir('facectl-') };
  const run = (args: string[], env: Record<string, string | undefined>) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(cli.node, [cli.bin, ...args], {
        cwd: cli.dir,
        env: { PATH: process.env.PATH, HOME: cli.dir, NO_COLOR: '1', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
        ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  return { asRoot, dir: cli.dir, run };
}

/** True when every parent directory lets others through and the file itself lets others read it. */
function openToOthers(path: string): boolean {
  try {
    accessSync(path, constants.F_OK);
  } catch {
    return false;
  }
  if ((statSync(path).mode & 0o004) === 0) return false;
  for (let current = dirname(path); ; current = dirname(current)) {
    if ((statSync(current).mode & 0o001) === 0) return false;
    if (current === parse(current).root) return true;
  }
}
