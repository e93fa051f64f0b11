import { Readable, Writable } from 'node:stream';
import type { Command } from 'commander';
import { run } from './main.js';
import { systemClock } from './clock.js';
import { assembleContext } from './process-context.js';
import { buildProgram } from './program.js';

/** Pages cli.ts prints, rendered into dist/help.json by scripts/build.mjs; help-pages.test.ts checks them live. */

/** Every command's path below the program, the program itself first (''), e.g. 'faces get'. */
export function commandPaths(command: Command, prefix: string[] = []): string[] {
  const paths = [prefix.join(' ')];
  for (const sub of command.commands) paths.push(...commandPaths(sub, [...prefix, sub.name()]));
  return paths;
}

function captureContext() {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const capture = (into: string[]) =>
    new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        into.push(chunk.toString());
        done();
      },
    });
  const ctx = assembleContext({
    streams: { stdin: Readable.from([]), stdout: capture(stdout), stderr: capture(stderr) },
    env: {},
    globals: { json: false, noInput: true, debug: false, insecureHttp: false },
    clock: systemClock,
    browser: { open: async () => false },
    signal: new AbortController().signal,
  });
  return { ctx, stdout: () => stdout.join(''), stderr: () => stderr.join('') };
}

/** What `facectl <path> --help` writes on a standard output that is not a terminal. */
export async function renderHelpPage(path: string): Promise<string> {
  const capture = captureContext();
  const argv = [...(path === '' ? [] : path.split(' ')), '--help'];
  const code = await run(argv, capture.ctx);
  if (code !== 0 || capture.stderr() !== '')
    throw new Error(`facectl ${argv.join(' ')} exited ${code}: ${capture.stderr()}`);
  return capture.stdout();
}

export async function renderHelpPages(): Promise<Record<string, string>> {
  const pages: Record<string, string> = {};
  for (const path of commandPaths(await buildProgram(captureContext().ctx))) pages[path] = await renderHelpPage(path);
  return pages;
}
