/**
 * The process entry (bin/facectl.js): answers `--version` and prebuilt `--help` itself, else loads run.ts. Built
 * as one CommonJS file (dist/cli.cjs) that imports nothing but run.js: keep it so.
 */
import { VERSION } from './version.js';

export async function runFromProcess(): Promise<number> {
  const argv = process.argv.slice(2);
  // Scripts call `facectl --version` to check the install: answer without loading anything else.
  const flags = new Set(argv);
  if ((flags.has('--version') || flags.has('-V')) && argv.length === (flags.has('--json') ? 2 : 1)) {
    process.stdout.write(flags.has('--json') ? `${JSON.stringify({ version: VERSION })}\n` : `${VERSION}\n`);
    return 0;
  }
  const help = prerenderedHelp(argv);
  if (help !== undefined) {
    // `facectl --help | head -1`: the reader went away, which is no failure.
    process.stdout.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
    });
    process.stdout.write(help);
    return 0;
  }
  const { runProcess } = await import('./run.js');
  return runProcess(argv);
}

/**
 * The prebuilt page of `facectl [command...] --help` when commander would wrap to 80 columns, else undefined. The
 * pages: dist/help.json, written by scripts/build.mjs next to dist/cli.cjs (node:fs is not imported: see bin).
 */
export function prerenderedHelp(
  argv: readonly string[],
  stdout: { isTTY?: boolean; columns?: number } = process.stdout,
  loadPages = (): unknown =>
    JSON.parse(process.getBuiltinModule('node:fs').readFileSync(`${import.meta.dirname}/help.json`, 'utf8')),
): string | undefined {
  const last = argv.at(-1);
  const words = argv.slice(0, -1);
  if ((last !== '--help' && last !== '-h') || words.some((word) => word.startsWith('-'))) return undefined;
  // As program.ts's helpWidth() decides for commander.
  if ((stdout.isTTY && stdout.columns !== undefined ? stdout.columns : 80) !== 80) return undefined;
  try {
    const page = (loadPages() as Record<string, unknown>)[words.join(' ')];
    return typeof page === 'string' ? page : undefined;
  } catch {
    return undefined; // no pages: running from the sources
  }
}
