import { accessSync, chmodSync, constants, copyFileSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, parse } from 'node:path';
import { build } from 'esbuild';
import { ROOT } from './run-cli.js';
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
