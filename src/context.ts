import type { Readable, Writable } from 'node:stream';
import type { ApiClient } from './api/types.js';

export type { ApiClient, CallOptions, RawRequest, RawResponse } from './api/types.js';

/**
 * Everything a command may touch, injected. Commands never reach for process, console, conf, open or
 * undici themselves: tests hand them a test context (buffer streams, scripted prompter, stub browser,
 * fixed clock, memory config) and production hands them createProcessContext(). Only main.ts sets the exit code.
 */

export interface InputStream extends Readable {
  isTTY?: boolean;
}
export interface OutputStream extends Writable {
  isTTY?: boolean;
  columns?: number;
}

export interface IO {
  readonly stdin: InputStream;
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  readonly stdinIsTTY: boolean;
  readonly stdoutIsTTY: boolean;
  readonly stderrIsTTY: boolean;
  /** Colour on stdout (NO_COLOR, FORCE_COLOR, TERM=dumb, CI and the TTY decide). */
  readonly color: boolean;
  /** Colour on stderr, by the same rules applied to stderr. */
  readonly stderrColor?: boolean;
  /** True only when stdin and stdout are terminals and neither --no-input nor CI is set. */
  canPrompt(): boolean;
}

/** Global flags, accepted before or after the subcommand. */
export interface GlobalOptions {
  baseUrl?: string;
  profile?: string;
  json: boolean;
  noInput: boolean;
  debug: boolean;
  insecureHttp: boolean;
  /** `--api-key-stdin`: the key is the first line of standard input (the rest stays readable). */
  apiKeyStdin?: boolean;
  /** `--jq EXPR`: the JSON output filtered by jq (implies --json). */
  jq?: string;
}

/** A column of a table view: which field, under which heading. */
export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
}

export interface Spinner {
  update(text: string): void;
  stop(finalText?: string): void;
}

export interface ProgressBar {
  update(completed: number, total: number, text?: string): void;
  stop(): void;
}

/**
 * How results reach people and scripts. Data goes to stdout: one JSON document under --json, a table
 * on a terminal, tab-separated rows when piped. Messages for people go to stderr.
 */
export interface Output {
  readonly json: boolean;
  /** One record: JSON under --json, else `field<TAB>value` lines / a two-column table. */
  record<T extends object>(value: T, fields?: Column<T>[]): void;
  /** A list: JSON array under --json, else a table on a terminal or tab-separated rows. */
  list<T extends object>(rows: T[], columns: Column<T>[]): void;
  /** One NDJSON line (batch commands under --json). */
  line(value: unknown): void;
  /** Raw text to stdout (e.g. a completion script, an OpenAPI document). */
  text(text: string): void;
  /** People's messages, on stderr. success() prints only on a terminal, like gh. */
  success(message: string): void;
  /**
   * What a command that prints no data did (`config set`, `auth switch`, `oauth disconnect`): said in
   * one line on stderr, terminal or not (a check mark on a terminal); under --json, `result` on stdout.
   */
  done(message: string, result: object): void;
  /**
   * Under --json, info and warnings are held until the command ends (so a failure leaves exactly one
   * JSON document on stderr); `immediate` is for what a person needs at once (a URL to open).
   */
  info(message: string, options?: { immediate?: boolean }): void;
  warn(message: string, options?: { immediate?: boolean }): void;
  /** Writes the held messages (the command succeeded). */
  flush?(): void;
  /** Returns and forgets the held messages (the command failed: they go into the JSON error). */
  takeHeld?(): string[];
  spinner(text: string): Spinner;
  progress(label: string): ProgressBar;
  /**
   * Loads what rendering needs for this invocation (cli-table3 on a terminal, chalk when coloured, ora
   * for spinners). declare.ts calls it before a verb runs; without it the renderer falls back to plain text.
   */
  prepare?(): Promise<void>;
}

export interface Prompter {
  input(options: { message: string; default?: string; validate?: (value: string) => true | string }): Promise<string>;
  password(options: { message: string }): Promise<string>;
  confirm(options: { message: string; default?: boolean }): Promise<boolean>;
  select<T extends string>(options: {
    message: string;
    choices: { name: string; value: T }[];
    default?: T;
  }): Promise<T>;
}

/** Where a key came from, as `auth status` reports it. */
export type KeySource = 'stdin' | 'env' | 'profile';

export interface Credentials {
  readonly baseUrl: string;
  readonly baseUrlSource: 'flag' | 'env' | 'profile' | 'default';
  readonly profile: string;
  /** The base URL the profile's stored key was saved for (it is sent nowhere else); absent with no stored key. */
  readonly keyBaseUrl?: string;
  /** The key, or undefined when none is configured anywhere. */
  apiKey(): Promise<{ key: string; source: KeySource } | undefined>;
  /**
   * Refuses a profile named by --profile or FACECTL_PROFILE that the file does not hold, when the file
   * was read for this command (its base URL would silently be the default one). Called before requests
   * are sent; commands that create the profile (`auth login`, `keys create --save`) do not call it.
   */
  checkNamedProfile?(): void;
  /** Why there is no key: where none was found. */
  describe(): string;
}

export interface ProfileSettings {
  api_key?: string;
  /** The base URL the key was saved with; the key is sent nowhere else. */
  api_key_base_url?: string;
  base_url?: string;
  [setting: string]: unknown;
}

export interface ConfigStore {
  /** The file behind the store, for messages. */
  readonly path: string;
  getProfile(name: string): ProfileSettings;
  setProfileValue(profile: string, key: string, value: unknown): Promise<void>;
  deleteProfileValue(profile: string, key: string): Promise<void>;
  /** Several settings of one profile (undefined removes one) in one locked write, read back. */
  /** With defaultIfFirst, the profile also becomes the default when the file has none (said in the result). */
  updateProfile(
    profile: string,
    patch: Record<string, unknown>,
    options?: { defaultIfFirst?: boolean },
  ): Promise<{ madeDefault: boolean }>;
  listProfiles(): string[];
  readonly defaultProfile: string;
  /** Sets (or, with undefined, clears) `default_profile`. */
  setDefaultProfile?(name: string | undefined): Promise<void>;
  /** A top-level (not per-profile) setting as stored, e.g. `default_profile`; undefined when absent. */
  getGlobal?(key: string): unknown;
}

export interface Browser {
  /** Opens the URL; resolves false when no browser could be opened (SSH, CI, no display). */
  open(url: string): Promise<boolean>;
  /** Why no browser will be tried here (CI, SSH, no display), or undefined. */
  unavailable?(): string | undefined;
}

export interface Clock {
  now(): Date;
  /** Waits; rejects with CancelError when the signal (or Ctrl-C) aborts the wait. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * What a command would otherwise read from `process`: the working directory, the process id, the
 * platform and Node's version. Production reads them from the process; a test may give its own.
 */
export interface Runtime {
  /** The working directory relative paths are read from (a function: it throws once the directory is gone). */
  cwd(): string;
  readonly pid: number;
  readonly platform: NodeJS.Platform;
  /** Node's version, without the `v` (process.versions.node). */
  readonly nodeVersion: string;
}

export interface Context {
  readonly io: IO;
  readonly out: Output;
  readonly prompter: Prompter;
  readonly globals: GlobalOptions;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly clock: Clock;
  readonly browser: Browser;
  readonly runtime: Runtime;
  /** Aborted on Ctrl-C. */
  readonly signal: AbortSignal;
  /** The config store; built on first use (commands that need no file never read it). */
  config(): Promise<ConfigStore>;
  credentials(): Promise<Credentials>;
  /**
   * The API client; built on first use, with the resolved base URL and key. Ctrl-C/SIGTERM abort its
   * requests in flight; with `untilAnswered` they are not: a request sent through that client is waited
   * for (within the HTTP timeouts) whatever the signal, for an answer that cannot be asked for again.
   */
  api(options?: { untilAnswered?: boolean }): Promise<ApiClient>;
}
