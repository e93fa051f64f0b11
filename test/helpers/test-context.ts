import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { Chalk } from 'chalk';
import ora from 'ora';
import type { ConfigData } from '../../src/config/profile-store.js';
import { Table, width, wrap } from '../../src/io/table-parts.js';
import type { Clock, ConfigStore, GlobalOptions, Prompter } from '../../src/context.js';
import { CancelError } from '../../src/errors.js';
import { assembleContext, type ClosableContext } from '../../src/process-context.js';
import { createMemoryConfigStore } from './memory-config.js';
import { makeTempDir } from './temp.js';

/**
 * A Context for tests: buffer streams (optionally flagged as terminals), a scripted prompter that fails
 * on an unexpected question and on answers left over, a stub browser, a clock, and a memory config.
 * api() is the real client (src/api) pointed at baseUrl, so commands are tested against real HTTP.
 */

export type Answer = string | boolean;

let stateRootDir: string | undefined;
let contexts = 0;
/** One temporary directory per test process; each context gets a subdirectory of it (made on first use). */
function stateRoot(): string {
  stateRootDir ??= makeTempDir('facectl-state-');
  return stateRootDir;
}

export interface TestContextOptions {
  /** Standard input's content; absent means an empty, ended stream. */
  stdin?: string | Buffer;
  stdinIsTTY?: boolean;
  stdoutIsTTY?: boolean;
  /** Defaults to stdoutIsTTY. */
  stderrIsTTY?: boolean;
  /** The whole environment the command sees (nothing leaks in from process.env). */
  env?: Record<string, string | undefined>;
  globals?: Partial<GlobalOptions>;
  /** Prompt answers, consumed in order: strings for input/password/select, booleans for confirm. */
  answers?: Answer[];
  /**
   * A fixed start time. With it, sleep() returns at once and moves the clock forward (polling loops
   * and timeouts run instantly); without it, the clock and sleep are real.
   */
  now?: Date | string;
  /** Stored in the active profile ("default"), as after `facectl auth login`. */
  baseUrl?: string;
  apiKey?: string;
  /** Initial content of the memory config store (merged under baseUrl/apiKey). */
  config?: ConfigData;
  /** What the stub browser's open() returns (default true). */
  browserOpens?: boolean;
  /** Why the stub browser will not be tried (as CI or SSH would say); default: it is tried. */
  browserUnavailable?: string;
  /** Passed to the API client (e.g. { headersTimeoutMs: 200, maxRetries: 1 }). */
  apiOptions?: Record<string, unknown>;
}

export interface PromptRecord {
  kind: 'input' | 'password' | 'confirm' | 'select';
  message: string;
}

export interface TestContext {
  ctx: ClosableContext;
  stdout(): string;
  stderr(): string;
  /** URLs the command asked the browser to open. */
  browserOpened: string[];
  /** The memory config store (inspect `config.data`). */
  config: ConfigStore & { data: ConfigData };
  /** Questions asked, in order. */
  prompts: PromptRecord[];
  assertNoLeftoverAnswers(): void;
  /** Simulates Ctrl-C: aborts ctx.signal with a CancelError. */
  interrupt(): void;
  /** Closes the API client's connections. */
  close(): Promise<void>;
}

export function createTestContext(options: TestContextOptions = {}): TestContext {
  const stdoutChunks: Buffer[] = [];
  const stderrChunks: Buffer[] = [];
  const stdoutIsTTY = options.stdoutIsTTY ?? false;
  const stderrIsTTY = options.stderrIsTTY ?? stdoutIsTTY;
  const stdin = Object.assign(Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]), {
    isTTY: options.stdinIsTTY ?? false,
  });
  const stdout = terminalLike(bufferStream(stdoutChunks), stdoutIsTTY);
  const stderr = terminalLike(bufferStream(stderrChunks), stderrIsTTY);

  const initial: ConfigData = structuredClone(options.config ?? {});
  if (options.apiKey !== undefined || options.baseUrl !== undefined) {
    const name = initial.default_profile ?? 'default';
    initial.profiles = { ...initial.profiles };
    initial.profiles[name] = {
      ...initial.profiles[name],
      ...(options.apiKey === undefined ? {} : { api_key: options.apiKey }),
      ...(options.baseUrl === undefined ? {} : { base_url: options.baseUrl }),
    };
  }
  const config = createMemoryConfigStore(initial, '/test/facectl/config.json');

  const controller = new AbortController();
  // Every request, wait and batch worker listens on it: up to --concurrency 64 at once, all removed again.
  setMaxListeners(0, controller.signal);
  const answers = [...(options.answers ?? [])];
  const prompts: PromptRecord[] = [];
  const next = (kind: PromptRecord['kind'], message: string): Answer => {
    prompts.push({ kind, message });
    if (answers.length === 0) throw new Error(`unexpected prompt (${kind}): ${message}`);
    const answer = answers.shift() as Answer;
    if ((kind === 'confirm') !== (typeof answer === 'boolean')) {
      throw new Error(`prompt ${JSON.stringify(message)} (${kind}) got a ${typeof answer} answer`);
    }
    return answer;
  };
  const prompter: Prompter = {
    input: async ({ message, validate }) => {
      const answer = next('input', message) as string;
      const verdict = validate ? validate(answer) : true;
      if (verdict !== true) throw new Error(`scripted answer ${JSON.stringify(answer)} refused: ${verdict}`);
      return answer;
    },
    password: async ({ message }) => next('password', message) as string,
    confirm: async ({ message }) => next('confirm', message) as boolean,
  };

  const browserOpened: string[] = [];
  const globals: GlobalOptions = { json: false, noInput: false, debug: false, insecureHttp: false, ...options.globals };
  const ctx = assembleContext({
    streams: { stdin, stdout, stderr, stdinIsTTY: stdin.isTTY, stdoutIsTTY, stderrIsTTY },
    // Batch journals in a directory of this context's own, unless the test names one.
    env: { FACECTL_STATE_DIR: join(stateRoot(), String(++contexts)), ...options.env },
    globals,
    clock: options.now === undefined ? realClock() : virtualClock(new Date(options.now)),
    browser: {
      open: async (url) => {
        browserOpened.push(url);
        return options.browserOpens ?? true;
      },
      unavailable: () => options.browserUnavailable,
    },
    signal: controller.signal,
    prompter,
    config: async () => config,
    renderModules: { Table, wrap, width, chalk: new Chalk({ level: 1 }), ora },
    ...(options.apiOptions ? { apiOptions: options.apiOptions } : {}),
  });

  return {
    ctx,
    stdout: () => Buffer.concat(stdoutChunks).toString('utf8'),
    stderr: () => Buffer.concat(stderrChunks).toString('utf8'),
    browserOpened,
    config,
    prompts,
    assertNoLeftoverAnswers() {
      if (answers.length > 0)
        throw new Error(`${answers.length} scripted answer(s) never asked for: ${JSON.stringify(answers)}`);
    },
    interrupt: () => controller.abort(new CancelError()),
    close: () => ctx.close(),
  };
}

function bufferStream(chunks: Buffer[]): Writable {
  return new Writable({
    write(chunk, _encoding, callback) {
      chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
      callback();
    },
  });
}

/**
 * A buffer stream flagged as a terminal gets the cursor methods of tty.WriteStream (ora calls them),
 * writing the same escape sequences so a test can see what was drawn.
 */
function terminalLike(stream: Writable, isTTY: boolean) {
  const extra = isTTY
    ? {
        cursorTo: (x: number, y?: number | (() => void), done?: () => void) => {
          stream.write(typeof y === 'number' ? `\x1b[${y + 1};${x + 1}H` : `\x1b[${x + 1}G`);
          (typeof y === 'function' ? y : done)?.();
          return true;
        },
        moveCursor: (dx: number, dy: number, done?: () => void) => {
          if (dx) stream.write(dx > 0 ? `\x1b[${dx}C` : `\x1b[${-dx}D`);
          if (dy) stream.write(dy > 0 ? `\x1b[${dy}B` : `\x1b[${-dy}A`);
          done?.();
          return true;
        },
        clearLine: (_dir: number, done?: () => void) => {
          stream.write('\x1b[2K');
          done?.();
          return true;
        },
        clearScreenDown: (done?: () => void) => {
          stream.write('\x1b[0J');
          done?.();
          return true;
        },
        getColorDepth: () => 8,
        hasColors: () => true,
      }
    : {};
  return Object.assign(stream, { isTTY, columns: 100, rows: 40 }, extra);
}

function abortable(signal: AbortSignal | undefined, wait: (done: () => void) => () => void): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new CancelError());
    const onAbort = () => {
      cancel();
      reject(new CancelError());
    };
    const cancel = wait(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function realClock(): Clock {
  return {
    now: () => new Date(),
    sleep: (ms, signal) =>
      abortable(signal, (done) => {
        const timer = setTimeout(done, ms);
        return () => clearTimeout(timer);
      }),
  };
}

/** Time that moves only when someone sleeps: sleeps return on the next turn of the event loop. */
function virtualClock(start: Date): Clock {
  let now = start.getTime();
  return {
    now: () => new Date(now),
    sleep: (ms, signal) =>
      abortable(signal, (done) => {
        const timer = setImmediate(() => {
          now += ms;
          done();
        });
        return () => clearImmediate(timer);
      }),
  };
}
