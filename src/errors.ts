/** The error kinds of the CLI: commands throw them; main.ts alone turns them into exit codes and messages. */

export const ExitCode = {
  ok: 0,
  error: 1,
  usage: 2,
  auth: 3,
  notFound: 4,
  conflict: 5,
  refused: 6,
  rateLimited: 7,
  network: 8,
  interrupted: 130,
  outputClosed: 141, // a batch stopped by its closed stdout: 128 + SIGPIPE, as git and gh end
  terminated: 143, // SIGTERM (`timeout`, a CI cancel): 128 + SIGTERM
} as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** `code`: stable, in --json errors; `hint`: the fix, the last line; `fields`: a `- field: message` line each. */
export type ErrorDetails = { code?: string; hint?: string; fields?: readonly FieldProblem[]; cause?: unknown };

export type FieldProblem = { field: string; message: string };

/** The codes of the errors that abort a command when its stdout is closed (EPIPE), or a write to it fails (ENOSPC). */
export const OUTPUT_CLOSED = 'output_closed';
export const OUTPUT_FAILED = 'output_failed';

export class CliError extends Error {
  readonly exitCode: ExitCodeValue;
  readonly code: string;
  readonly hint: string | undefined;
  readonly fields: readonly FieldProblem[] | undefined;

  constructor(message: string, exitCode: ExitCodeValue, details: ErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.exitCode = exitCode;
    this.code = details.code ?? 'error';
    this.hint = details.hint;
    this.fields = details.fields;
  }
}

/** Bad flags, files or input: nothing was sent. */
export class UsageError extends CliError {
  constructor(message: string, details: ErrorDetails = {}) {
    super(message, ExitCode.usage, { code: 'usage', ...details });
  }
}

/** No key, or the service refused the key (401). */
export class AuthError extends CliError {
  constructor(message: string, details: ErrorDetails = {}) {
    super(message, ExitCode.auth, {
      code: 'not_authenticated',
      hint: 'run `facectl auth login`, or set FACECTL_API_KEY',
      ...details,
    });
  }
}

/** The service answered with an error status. */
export class ApiError extends CliError {
  readonly status: number;
  readonly detail: unknown;

  constructor(
    message: string,
    status: number,
    details: ErrorDetails & { detail?: unknown; exitCode?: ExitCodeValue } = {},
  ) {
    const { exitCode = exitCodeForStatus(status), ...rest } = details;
    super(message, exitCode, rest);
    this.status = status;
    this.detail = details.detail;
  }
}

/** The service answered something the contract does not allow (exit 1). */
export class ResponseError extends CliError {
  constructor(message: string, details: ErrorDetails = {}) {
    super(message, ExitCode.error, { code: 'unexpected_response', ...details });
  }
}

/** The service could not be reached, or did not answer in time. */
export class NetworkError extends CliError {
  /** Nothing reached the service (connection refused, unknown host, no connection): nothing was done there. */
  readonly unsent: boolean;

  constructor(message: string, details: ErrorDetails & { unsent?: boolean } = {}) {
    const { unsent = false, ...rest } = details;
    super(message, ExitCode.network, { code: 'network_error', ...rest });
    this.unsent = unsent;
  }
}

/** A confirmation answered no: the user's choice, said without `error:` (as gh does), exit 1 (README). */
export class DeclinedError extends CliError {
  constructor(message: string) {
    super(message, ExitCode.error, { code: 'declined' });
  }
}

/** Ctrl-C, or a prompt the user cancelled; SIGTERM or a closed output when `exitCode` says so. */
export class CancelError extends CliError {
  constructor(message = 'interrupted', details: ErrorDetails & { exitCode?: ExitCodeValue } = {}) {
    const { exitCode = ExitCode.interrupted, ...rest } = details;
    super(message, exitCode, { code: 'interrupted', ...rest });
  }
}

/** The error a wait or request ends with when `signal` aborted it: its reason (SIGTERM's says 143), else Ctrl-C's. */
export const cancelledBy = (signal: AbortSignal | undefined): CancelError =>
  signal?.reason instanceof CancelError ? signal.reason : new CancelError();

export function exitCodeForStatus(status: number): ExitCodeValue {
  if (status === 401) return ExitCode.auth;
  if (status === 402 || status === 403) return ExitCode.refused;
  if (status === 404) return ExitCode.notFound;
  if (status === 409) return ExitCode.conflict;
  if (status === 400 || status === 413 || status === 422) return ExitCode.usage;
  if (status === 429) return ExitCode.rateLimited;
  return ExitCode.error;
}

/** A 422's list of `{loc, msg}` as field errors, as a refusal before sending lists them (`fields`). */
export function detailFields(detail: unknown[]): FieldProblem[] {
  const fields = detail.map((item) => {
    const { loc, msg } = (item ?? {}) as { loc?: unknown; msg?: unknown };
    const field = Array.isArray(loc) ? loc.filter((part, i) => !(i === 0 && part === 'body')).join('.') : '';
    return { field, message: typeof msg === 'string' ? msg : JSON.stringify(item) };
  });
  // Two checks of one field may say the same thing (a value too short and of the wrong form): once.
  return [...new Map(fields.map((problem) => [`${problem.field}\n${problem.message}`, problem])).values()];
}

/** The service's detail of an error, as lines: a field error each (`- alias: must be ...`), or the detail. */
export function detailLines(detail: unknown, message: string): string[] {
  if (Array.isArray(detail)) {
    return detailFields(detail).map(({ field, message }) => `- ${field ? `${field}: ` : ''}${message}`);
  }
  if (typeof detail === 'string' && detail !== '' && !message.includes(detail)) return [`detail: ${detail}`];
  if (detail !== undefined && typeof detail !== 'string') return [`detail: ${JSON.stringify(detail)}`];
  return [];
}

// Not after a letter or digit (`x_fcs_…` in a code is a key; `\b` missed it after `_`).
const FULL_KEY = /(?<![A-Za-z0-9])(fcs_[A-Za-z0-9]{8})_[A-Za-z0-9]{4,}/g;

/** Any full API key cut to its prefix (`fcs_AbCdEfGh_…`): a message refusing a misplaced key would quote it back. */
export const withoutKeys = (text: string): string => (text.includes('fcs_') ? text.replace(FULL_KEY, '$1_…') : text);

/** Whether a text holds a full API key (a new key's answer, `auth token`'s). */
export const holdsKey = (text: string): boolean => text.includes('fcs_') && text.search(FULL_KEY) >= 0;

/**
 * With --profile NAME (or --base-url URL), each `facectl …` a hint quotes gets it too (unless it names its own), so
 * the fix reaches the same profile and service.
 */
export function forProfile(hint: string, profile: string | undefined, baseUrl?: string): string {
  // Only a name a profile can have (one refused as invalid is not repeated into a fix), a URL pasted as it is.
  const flags = [
    ...(profile !== undefined && /^[\w-]{1,64}$/.test(profile) ? [['--profile', profile]] : []),
    ...(baseUrl !== undefined && /^https?:\/\/[\w.:/[\]%@-]+$/.test(baseUrl) ? [['--base-url', baseUrl]] : []),
  ];
  return hint.replace(/`([^`]*\bfacectl [^`]*)`/g, (quoted, command: string) => {
    if (/--help\b|\bauth switch\b|^facectl serve\b/.test(command)) return quoted;
    // A config command sets what the flag would override.
    const own = (flag: string) =>
      command.includes(flag) || (flag === '--base-url' && /^facectl config\b/.test(command));
    const added = flags.filter(([flag]) => !own(flag as string)).map((pair) => ` ${pair.join(' ')}`);
    return added.length === 0 ? quoted : `\`${command}${added.join('')}\``;
  });
}
