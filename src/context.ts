import type { Readable, Writable } from 'node:stream';
import type { ApiClient } from './api/types.js';
import type { ProfileStore } from './config/profile-store.js';

export type { ApiClient, CallOptions, RawRequest, RawResponse } from './api/types.js';

/** Everything a command may touch, injected: tests give buffer streams, a scripted prompter, a fixed clock. */
export type InputStream = Readable & { isTTY?: boolean };
export type OutputStream = Writable & { isTTY?: boolean; columns?: number };

/** color, stderrColor: colour on stdout, stderr; canPrompt(): stdin, stdout and stderr terminals, no --no-input nor CI. */
export type IO = Readonly<{ stdin: InputStream; stdout: OutputStream; stderr: OutputStream; stderrColor?: boolean }> &
  Readonly<Record<'stdinIsTTY' | 'stdoutIsTTY' | 'stderrIsTTY' | 'color', boolean>> & { canPrompt(): boolean };

/** Global flags (program.ts GLOBAL_FLAGS), accepted before or after the subcommand. */
export type GlobalOptions = { baseUrl?: string; profile?: string; jq?: string; apiKeyStdin?: boolean } & {
  [K in 'json' | 'noInput' | 'debug' | 'insecureHttp']: boolean;
};

/** `style`: a colour for a cell's text on a colour terminal (a check's status). */
export type Column<T> = { header: string; value: (row: T) => unknown; style?: (text: string) => Paint | undefined };

export type Paint = 'green' | 'yellow' | 'red';

export type Spinner = { update(text: string): void; stop(): void };

export type ProgressBar = { update(completed: number, total: number, text?: string): void; stop(): void };

/** How results reach people and scripts (io/output.ts): data on stdout, people's messages on stderr. */
export interface Output {
  readonly json: boolean;
  /** The `written` of the last data printed: the change a command made, said when its output could not be written. */
  readonly written: string | undefined;
  /** JSON under --json, else `field<TAB>value` lines or a table; `written`: the change made, said if --jq or the write fails. */
  record<T extends object>(value: T, fields?: Column<T>[], written?: string): void;
  /** A list: JSON array under --json, else a table on a terminal or tab-separated rows. */
  list<T extends object>(rows: T[], columns: Column<T>[]): void;
  /** One NDJSON line (batch commands under --json). */
  line(value: unknown): void;
  text(text: string, written?: string): void;
  /** A success line, only on a terminal, like gh. */
  success(message: string): void;
  /** What a command that prints no data did: a line on stderr; under --json, `result` on stdout. */
  done(message: string, result: object, written?: string): void;
  /** Held under --json until the command ends (one JSON document on a failure); `immediate`: needed at once (a URL). */
  info(message: string, options?: { immediate?: boolean }): void;
  warn(message: string, options?: { immediate?: boolean }): void;
  flush(): void; // writes the held messages (the command succeeded)
  takeHeld(): string[]; // returns and forgets them (the command failed: they go into the JSON error)
  spinner(text: string): Spinner;
  progress(label: string): ProgressBar;
  /** Loads what rendering needs (cli-table3, chalk, ora, jq); without it tables fall back to plain text. */
  prepare(): Promise<void>;
}

export interface Prompter {
  input(options: { message: string; default?: string; validate?: (value: string) => true | string }): Promise<string>;
  password(options: { message: string }): Promise<string>;
  confirm(options: { message: string; default?: boolean }): Promise<boolean>;
}

export type KeySource = 'stdin' | 'env' | 'profile';

export interface Credentials {
  readonly baseUrl: string;
  readonly baseUrlSource: 'flag' | 'env' | 'profile' | 'default';
  readonly profile: string;
  /** The base URL the profile's stored key was saved for (it is sent nowhere else); absent with no stored key. */
  readonly keyBaseUrl?: string;
  apiKey(): Promise<{ key: string; source: KeySource } | undefined>;
  /** Refuses a profile --profile or FACECTL_PROFILE names that the file lacks (it would use the default base URL). */
  checkNamedProfile(): void;
  /** Why there is no key: where none was found. */
  describe(): string;
}

/** The settings file (config/file-store.ts; in memory for tests). */
export type ConfigStore = ProfileStore;

/** open() resolves false when no browser could be opened; unavailable(): why none is tried (CI, SSH, no display). */
export type Browser = { open(url: string): Promise<boolean>; unavailable?(): string | undefined };

/** sleep() rejects with CancelError when the signal (or Ctrl-C) aborts the wait. */
export type Clock = { now(): Date; sleep(ms: number, signal?: AbortSignal): Promise<void> };

/** What a command would read from `process` (a test may give its own); cwd() throws once its directory is gone. */
export type Runtime = { cwd(): string; readonly platform: NodeJS.Platform; readonly nodeVersion: string };

/** signal: aborted on Ctrl-C, SIGTERM, and a failed or closed stdout; config(): read on first use (if ever). */
export type Context = Readonly<{ io: IO; out: Output; prompter: Prompter; globals: GlobalOptions; clock: Clock }> &
  Readonly<{ env: Readonly<Record<string, string | undefined>>; browser: Browser; runtime: Runtime }> &
  Readonly<{ signal: AbortSignal }> & {
    config(): Promise<ConfigStore>;
    credentials(): Promise<Credentials>;
    /** Ctrl-C/SIGTERM abort its requests; `untilAnswered`'s are waited for (within the HTTP timeouts). */
    api(options?: { untilAnswered?: boolean }): Promise<ApiClient>;
    /** How to go on (a batch's --resume command), said by a second Ctrl-C/SIGTERM, which ends the process at once. */
    stopHint?: string;
    /**
     * Run by that second signal: keeps what must be kept (a batch's journal) and gives how far it got (its counts),
     * said too unless the command's end said it already.
     */
    onSecondSignal?: () => string | undefined;
  };
