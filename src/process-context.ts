import { setMaxListeners } from 'node:events';
import { writeSync } from 'node:fs';
import type { ApiClient, Context, GlobalOptions } from './context.js';
import { systemClock } from './clock.js';
import { CancelError, CliError, ExitCode, OUTPUT_CLOSED, OUTPUT_FAILED, UsageError } from './errors.js';
import { createOutput, type RenderModules, safeJson, visible } from './io/output.js';
import { createPrompter } from './io/prompter.js';
import { createSystemBrowser } from './io/browser.js';
import { createIO, type IOStreams } from './io/terminal.js';

/** The assembly shared with tests; it costs nothing: the store, undici, prompts, ora, etc. load on first use. */
export type ContextParts = Pick<Context, 'env' | 'globals' | 'clock' | 'browser' | 'signal'> &
  Partial<Pick<Context, 'runtime' | 'prompter' | 'config'>> & {
    streams: IOStreams;
    renderModules?: RenderModules;
    /** Extra options for the API client (tests shorten timeouts). */
    apiOptions?: Record<string, unknown>;
  };

/** close(): the API client's connections, so the process can exit at once. */
export type ClosableContext = Context & { close(): Promise<void> };

export function assembleContext({ streams, renderModules, apiOptions, ...parts }: ContextParts): ClosableContext {
  const { env, globals, signal } = parts;
  const io = createIO(streams, env, globals);
  const out = createOutput(io, env, globals, renderModules);
  const once = <T>(make: () => Promise<T>) => {
    let made: Promise<T> | undefined;
    return () => (made ??= make());
  };

  const config = parts.config
    ? once(parts.config)
    : once(async () => {
        const { openConfigStore } = await import('./config/file-store.js');
        return openConfigStore(env, (message) => out.warn(message));
      });

  const credentials = once(async () => {
    const { resolveCredentials } = await import('./config/credentials.js');
    return resolveCredentials({ env, globals, stdin: io.stdin, stdinIsTTY: io.stdinIsTTY, config });
  });

  const clients: ApiClient[] = [];
  const client = (untilAnswered: boolean) =>
    once(async () => {
      // The client's modules load while the credentials are resolved.
      const [creds, { clientForContext }] = await Promise.all([credentials(), import('./api/context-client.js')]);
      creds.checkNamedProfile();
      const made = clientForContext(
        ctx,
        {
          baseUrl: creds.baseUrl,
          apiKey: () => creds.apiKey(),
          noKeyMessage: `not logged in: ${creds.describe()}`,
        },
        { ...apiOptions, ...(untilAnswered ? { signal: undefined } : {}) },
      );
      clients.push(made);
      return made;
    });
  const [api, apiUntilAnswered] = [client(false), client(true)];

  const ctx: ClosableContext = {
    ...parts,
    io,
    out,
    prompter: parts.prompter ?? createPrompter(io.stdin, io.stderr, signal),
    runtime: parts.runtime ?? { cwd: workingDirectory, platform: process.platform, nodeVersion: process.versions.node },
    config,
    credentials,
    api: (options) => (options?.untilAnswered ? apiUntilAnswered() : api()),
    close: async () => void (await Promise.all(clients.map((made) => made.close()))),
  };
  return ctx;
}

const SIGNAL_CODES = { SIGINT: ExitCode.interrupted, SIGTERM: ExitCode.terminated } as const;
type StopSignal = keyof typeof SIGNAL_CODES;

/** Node's handlers removed, the signal's default action (death by it) applies. */
function dieBy(signal: StopSignal): void {
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
}

/**
 * Ctrl-C (exit 130) or SIGTERM (143) aborts ctx.signal; a second one ends the process at once. EPIPE on stdout
 * aborts quietly (a batch cut short by it says so, exit 141).
 */
export function createProcessContext() {
  const controller = new AbortController();
  // Every request, wait and batch worker listens on it: up to --concurrency 64 at once, all removed again.
  setMaxListeners(0, controller.signal);
  const globals: GlobalOptions = { json: false, noInput: false, debug: false, insecureHttp: false };
  let received: StopSignal | undefined;
  // run() has returned with an error: its one error document is written.
  let reported = false;
  // Written directly (the stream may be busy or its owner gone); under --json not after the command's own error
  // document (stderr carries exactly one).
  const named = (signal: StopSignal) => (signal === 'SIGINT' ? 'Ctrl-C (SIGINT)' : signal);
  const atOnce = (signal: StopSignal) => {
    const message =
      received === undefined || received === signal
        ? `stopped at once by a second ${named(signal)}`
        : `stopped at once by ${named(signal)} after ${named(received)}`;
    try {
      // The first signal's error says how to go on (a batch's --resume): the second, which may come first, too.
      const hint = ctx.stopHint;
      // And how far it got (a batch's counts, if its summary is not said yet); under --json in `warnings`, after the
      // messages held, as the first's error has them.
      const counts = ctx.onSecondSignal?.();
      if (!globals.json) {
        const said = [counts, `error: ${message}`, hint].filter((line) => line !== undefined);
        writeSync(2, `${said.map((line) => visible(line)).join('\n')}\n`);
      } else if (!reported) {
        const warnings = [...ctx.out.takeHeld(), ...(counts === undefined ? [] : [counts])];
        const error = { code: 'interrupted', message, ...(hint === undefined ? {} : { hint }) };
        writeSync(2, `${safeJson({ error: { ...error, ...(warnings.length > 0 ? { warnings } : {}) } })}\n`);
      }
    } finally {
      dieBy(signal);
      process.exit(SIGNAL_CODES[signal]);
    }
  };
  let signalled = () => undefined as void;
  const signalCame = new Promise<void>((resolve) => (signalled = resolve));
  // SIGTERM (`timeout`, a CI cancel) stops as Ctrl-C does, so a batch keeps its journal; a second ends it at once.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (controller.signal.aborted) atOnce(signal);
      received ??= signal;
      signalled();
      controller.abort(
        new CancelError(signal === 'SIGINT' ? undefined : 'terminated', { exitCode: SIGNAL_CODES[signal] }),
      );
    });
  }
  // A reader of stderr that went away (`2>&1 | head -c 5`): what is left to say is lost, the exit code is not.
  process.stderr.on('error', () => undefined);
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    // A reader that went away (`| head`) is no failure; a write that failed (`> file` on a full disk) is.
    controller.abort(
      error.code === 'EPIPE'
        ? new CliError('output closed', ExitCode.ok, { code: OUTPUT_CLOSED })
        : new CliError(`cannot write to standard output: ${error.message}`, ExitCode.error, {
            code: OUTPUT_FAILED,
            cause: error,
          }),
    );
  });
  const ctx = assembleContext({
    streams: { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr },
    env: process.env,
    globals,
    clock: systemClock,
    browser: createSystemBrowser(process.env),
    signal: controller.signal,
    apiOptions: { fastExit: true },
  });
  // After run(): closes the API client (keep-alive would hold the process open), drains stdout and stderr, and ends
  // the process: a command interrupted by SIGINT or SIGTERM (exit 130/143) by re-raising the signal, so a shell stops
  // its loop too; any other with its code, here: Node's own wind-down gives the signals their default action back,
  // and one coming then (a Ctrl-C just after a batch's last result) killed the process with nothing said.
  const finish = async (code: number) => {
    reported = code !== ExitCode.ok;
    await ctx.close();
    // Written to the end: a pipe whose reader is slow takes a large write asynchronously, which an exit would cut.
    const drained = (stream: NodeJS.WriteStream) =>
      stream.destroyed || stream.writableLength === 0 || new Promise((resolve) => stream.write('', resolve));
    // Once a signal has come (before or during this wait), a reader that does not read is waited for a second at most,
    // so `kill PID; wait PID` ends: what it did not take is lost (a batch's --resume prints its results again).
    const waited = signalCame.then(() => new Promise((resolve) => setTimeout(resolve, 1000)));
    await Promise.race([Promise.all([drained(process.stdout), drained(process.stderr)]), waited]);
    // Only an interruption that ended the command as interrupted (serve's clean stop exits 0).
    if (received !== undefined && code === SIGNAL_CODES[received]) dieBy(received);
    process.exit(code);
  };
  return Object.assign(ctx, { finish });
}

/** process.cwd(), which fails once the directory is removed (uv_cwd): said so, before anything is sent. */
function workingDirectory(): string {
  try {
    return process.cwd();
  } catch (error) {
    throw new UsageError('the working directory was removed', {
      code: 'no_working_directory',
      hint: 'cd to a directory that exists and run the command again',
      cause: error,
    });
  }
}
