import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { optimizeSooner } from '../api/bulk-v8.js';
import type { Context } from '../context.js';
import { CancelError, CliError, ExitCode, UsageError } from '../errors.js';
import { safeJson } from '../io/output.js';
import type { BootstrapUser, ServiceOptions } from '../service/index.js';
import { checkFlags } from './flag-check.js';
import { usd } from './kit.js';
import { dataFileProblem, realDataPath, SERVE_FLAGS } from './serve-flags.js';

/** `dataFile` is the real file (symbolic links resolved); `dataGiven` the path as given (absolute). */
type ServeOptions = ReturnType<typeof parseServeOptions>;

/** A direct caller may leave out what commander defaults; every bad flag is refused at once. */
export function parseServeOptions(ctx: Pick<Context, 'globals'>, raw: Record<string, unknown>) {
  const defaults = Object.fromEntries(
    Object.entries(SERVE_FLAGS).flatMap(([key, flag]) => ('default' in flag ? [[key, flag.default]] : [])),
  );
  const flags = checkFlags(SERVE_FLAGS, { ...defaults, ...raw });
  const dataGiven = flags.data === undefined ? undefined : resolve(flags.data);
  return {
    ...flags,
    port: Number(flags.port),
    rateLimit: flags.rateLimit === undefined ? undefined : Number(flags.rateLimit),
    json: raw.json === true || ctx.globals.json,
    dataGiven,
    dataFile: dataGiven === undefined ? undefined : realDataPath(dataGiven),
  };
}

/** Who answers OAuth consent (--consent), as the banner says. */
const CONSENT = { page: 'a person, on the consent page', approve: 'approved at once', deny: 'denied at once' };

const dataName = ({ dataFile, dataGiven }: ServeOptions): string | undefined =>
  dataFile === dataGiven ? dataFile : `${dataFile} (given as ${dataGiven})`;

/** `onStop`: how a test stops serve besides ctx.signal; it returns a function that removes it. */
export async function runServe(
  ctx: Context,
  opts: Record<string, unknown>,
  hooks: { onStop?: (stop: () => void) => () => void; service?: Partial<ServiceOptions> } = {},
): Promise<void> {
  const options = parseServeOptions(ctx, opts);
  optimizeSooner();
  const { startService, writeFailure } = await import('../service/index.js');
  const service = await startService({
    ...options,
    // Under --json every stderr line is JSON, as for every command: `{"warning": …}` or `{"debug": …}`.
    log: (line, kind = 'warning') =>
      ctx.io.stderr.write(options.json ? `${safeJson({ [kind]: line })}\n` : `facectl serve: ${line}\n`),
    accessLog: ctx.globals.debug,
    ...hooks.service,
  }).catch((error: unknown) => {
    throw startFailure(error, options, writeFailure(error));
  });

  const port = new URL(service.baseUrl).port;
  const everywhere = ALL_INTERFACES.has(options.host);
  if (everywhere) {
    // The bootstrap keys are printed below: whoever reaches this port can use them.
    ctx.out.warn(
      `listening on all interfaces (${options.host}): anyone who can reach this machine on port ${port} can use ` +
        'the service and its bootstrap keys; use --host 127.0.0.1 to keep it to this machine',
      { immediate: true },
    );
  }
  if (options.json) ctx.out.line({ base_url: service.baseUrl, users: service.users });
  else {
    const listening = everywhere ? `http://${options.host.includes(':') ? '[::]' : '0.0.0.0'}:${port}` : undefined;
    ctx.out.text(summary(service.baseUrl, service.users, options, listening));
  }

  let removeListeners: (() => void) | undefined;
  await new Promise<void>((resolveStop) => {
    if (ctx.signal.aborted) return resolveStop();
    ctx.signal.addEventListener('abort', () => resolveStop(), { once: true });
    removeListeners = hooks.onStop?.(resolveStop);
  });
  removeListeners?.();
  await service.close();
  const { rescued } = service.store;
  let savedTo = rescued ?? dataName(options);
  if (rescued !== undefined) {
    ctx.out.warn(`${dataName(options)} was replaced or removed while serve ran: its state is saved to ${rescued}`);
  } else if (options.dataFile && (statSync(`${options.dataFile}-wal`, { throwIfNoEntry: false })?.size ?? 0) > 0) {
    // The close folds SQLite's log into the file; when that fails (no room, a size limit) the log stays.
    ctx.out.warn(
      `${options.dataFile}-wal holds changes that could not be folded into ${options.dataFile} (no room?): keep the two files together`,
    );
    savedTo = `${savedTo} and ${options.dataFile}-wal`;
  }
  ctx.out.info(options.dataFile ? `facectl serve stopped; state saved to ${savedTo}` : 'facectl serve stopped');
  // A signal (SIGINT, SIGTERM) is how a server is stopped: success. Another reason (a failed stdout) is the outcome.
  const reason: unknown = ctx.signal.reason;
  if (reason instanceof CliError && !(reason instanceof CancelError)) throw reason;
}

/** `storage`: what SQLite said when it could not write (database.ts writeFailure), if that is why. */
function startFailure(error: unknown, options: ServeOptions, storage: string | undefined): CliError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') {
    // A conflict (exit 5), as a batch another facectl runs: the same command works once the port is free.
    return new CliError(`port ${options.port} on ${options.host} is already in use`, ExitCode.conflict, {
      code: 'address_in_use',
      hint: 'pick another with --port, or --port 0 for a free one',
      cause: error,
    });
  }
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
    return new UsageError(`--host: cannot listen on ${options.host}`, { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'EBADSTATE') {
    // The --data file is not one this serve can load: bad input (exit 2); it was left as it was.
    return new CliError(`--data: ${message}`, ExitCode.usage, {
      code: 'invalid_state_file',
      hint:
        (error as { hint?: string }).hint ??
        'point --data at another file (a new one starts empty), or use the facectl version that wrote it',
      cause: error,
    });
  }
  if (
    options.dataFile !== undefined &&
    ['ENOENT', 'EISDIR', 'ENOTDIR', 'EACCES', 'EPERM', 'EROFS'].includes(code ?? '') &&
    (error as NodeJS.ErrnoException).syscall !== 'listen'
  ) {
    // The path changed after dataFileProblem checked it: still a problem with --data, said the same way.
    return new UsageError(`--data: ${dataFileProblem(options.dataFile) ?? `${options.dataFile}: ${message}`}`, {
      cause: error,
    });
  }
  if (code === 'EDATAINUSE') {
    // A conflict (exit 5), not a usage error: the same command works once the other serve stops.
    const given = options.dataFile === options.dataGiven ? '' : ` (given as ${options.dataGiven})`;
    return new CliError(`cannot start the local service: ${message}${given}`, ExitCode.conflict, {
      code: 'data_in_use',
      hint:
        'stop the other facectl serve first (or another program writing to the file, such as an sqlite3 ' +
        'shell in a transaction), or give this one another --data file',
      cause: error,
    });
  }
  if (storage !== undefined) {
    const where = options.dataFile === undefined ? 'its temporary database' : dataName(options);
    return new CliError(`cannot start the local service: ${where} could not be written (${storage})`, ExitCode.error, {
      code: 'storage_error',
      hint:
        (storage === 'disk I/O error'
          ? 'a full disk, a file size limit (ulimit -f) or a failing disk does this; '
          : '') +
        (options.dataFile === undefined
          ? 'free some room in the temporary directory (TMPDIR), or give --data a file on another disk'
          : 'free some room on its disk, or give --data a file on another disk'),
      cause: error,
    });
  }
  return new CliError(`cannot start the local service: ${message}`, ExitCode.error, {
    code: 'serve_failed',
    cause: error,
  });
}

/** The --host values that listen on every interface (IPv4 or IPv6): the banner and a warning say so. */
const ALL_INTERFACES = new Set(['0.0.0.0', '::', '[::]', '::0', '0:0:0:0:0:0:0:0']);

/** `listening`: the address bound when it is not the base URL (all interfaces); the base URL is then loopback. */
function summary(baseUrl: string, users: BootstrapUser[], options: ServeOptions, listening?: string): string {
  // Two lines a plan, so each fits 60 columns (a key is 45 characters).
  const rows = users.flatMap((u) => {
    const quota =
      u.compile_quota_tokens > 0
        ? `${u.compile_quota_tokens.toLocaleString('en-US')} compile tokens/month`
        : 'no compile quota';
    return [`  ${u.plan.padEnd(9)} ${u.key}`, `            credits ${usd(u.credits_usd)}; ${quota}`];
  });
  return [
    ...(listening
      ? [`Local Face Compilation Service listening on all interfaces at ${listening}`, `From this machine: ${baseUrl}`]
      : [`Local Face Compilation Service at ${baseUrl}`]),
    '',
    options.dataFile
      ? 'Bootstrap API keys, one per plan (new at every start; those of earlier starts stay valid):'
      : 'Bootstrap API keys, one per plan (new ones at every start):',
    ...rows,
    '',
    `OAuth provider: ${options.oauthProvider} (Connect plan only)`,
    `OAuth consent: ${CONSENT[options.consent]}`,
    options.dataFile ? `State: ${dataName(options)}` : 'State: in memory only (use --data FILE to keep it)',
    '',
    `Try: facectl auth login --base-url ${baseUrl}`,
    '     and paste a key from above.',
    'Press Ctrl-C to stop.',
    '',
  ].join('\n');
}
