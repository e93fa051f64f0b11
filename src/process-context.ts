import type { Context, Output } from './context.js';

/**
 * The production context. Everything costly (conf, undici, prompts, open) is built on first use, so
 * creating the context costs nothing for `--version`.
 */
export function createProcessContext(argv: string[]): Context {
  const controller = new AbortController();
  const json = argv.includes('--json');
  const write = (stream: NodeJS.WriteStream) => (text: string) => stream.write(text);
  const out: Output = {
    json,
    record: (value) => write(process.stdout)(`${JSON.stringify(value, null, 2)}\n`),
    list: (rows) => write(process.stdout)(`${JSON.stringify(rows, null, 2)}\n`),
    line: (value) => write(process.stdout)(`${JSON.stringify(value)}\n`),
    text: write(process.stdout),
    success: (m) => write(process.stderr)(`${m}\n`),
    info: (m) => write(process.stderr)(`${m}\n`),
    warn: (m) => write(process.stderr)(`warning: ${m}\n`),
    spinner: () => ({ update() {}, stop() {} }),
    progress: () => ({ update() {}, stop() {} }),
  };
  const unavailable = async (): Promise<never> => {
    throw new Error('not available yet');
  };
  return {
    io: {
      stdin: process.stdin,
      stdout: process.stdout,
      stderr: process.stderr,
      stdinIsTTY: Boolean(process.stdin.isTTY),
      stdoutIsTTY: Boolean(process.stdout.isTTY),
      stderrIsTTY: Boolean(process.stderr.isTTY),
      color: false,
      canPrompt: () => false,
    },
    out,
    prompter: { input: unavailable, password: unavailable, confirm: unavailable, select: unavailable },
    globals: { json, noInput: true, debug: argv.includes('--debug'), insecureHttp: false },
    env: process.env,
    clock: {
      now: () => new Date(),
      sleep: (ms, signal) =>
        new Promise((resolve) => {
          const timer = setTimeout(resolve, ms);
          signal?.addEventListener('abort', () => {
            clearTimeout(timer);
            resolve();
          });
        }),
    },
    browser: { open: async () => false },
    signal: controller.signal,
    config: unavailable,
    credentials: unavailable,
    api: unavailable,
  };
}
