import { CliError, ExitCode, type ExitCodeValue, UsageError } from '../errors.js';
import { isPlainObject, tryParseJson } from '../input/json.js';

/** The configuration's shape and the profile logic, on the file (file-store.ts) or in memory (tests). */

export interface ProfileSettings {
  api_key?: string;
  /** The key is sent nowhere else. */
  api_key_base_url?: string;
  base_url?: string;
  [setting: string]: unknown;
}

export interface ConfigData {
  default_profile?: string;
  profiles?: Record<string, ProfileSettings>;
  [key: string]: unknown;
}

export interface ConfigBackend {
  readonly path: string;
  read(): ConfigData;
  /**
   * Read-modify-write no other writer can interleave with; returns the data read back. A `change` that gives back
   * the very data it was given makes no missing file.
   */
  update(change: (data: ConfigData) => ConfigData): Promise<ConfigData>;
}

export const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export class ConfigFileError extends CliError {
  constructor(message: string, hint: string, cause?: unknown) {
    super(message, ExitCode.usage, { code: 'config_invalid', hint, cause });
  }
}

/** Exit 1, the old file intact (exit 2 for a file facectl refuses to write: nothing was tried). */
export class ConfigWriteError extends CliError {
  constructor(message: string, cause?: unknown, hint?: string, exitCode: ExitCodeValue = ExitCode.error) {
    super(message, exitCode, {
      code: 'config_write_failed',
      hint: hint ?? 'check the permissions of the configuration directory, or set FACECTL_CONFIG_DIR to a writable one',
      cause,
    });
  }
}

export function checkProfileName(name: string, via?: string): string {
  if (!PROFILE_NAME.test(name)) {
    throw new UsageError(`invalid profile name ${JSON.stringify(name)}${via ? ` (${via})` : ''}`, {
      code: 'invalid_profile',
      hint: 'use letters, digits, - and _ (up to 64 characters)',
    });
  }
  return name;
}

/** Refuses a profile not in the file (a typo would silently log out), naming where it came from. */
export function checkKnownProfile(store: ProfileStore, name: string, via?: string): void {
  const listed = store.listProfiles();
  if (listed.includes(name)) return;
  // Only names a --profile could give: one written by hand with a newline would break the hint's line.
  const known = listed.filter((profile) => PROFILE_NAME.test(profile));
  throw new UsageError(`no profile named ${JSON.stringify(name)}${via ? ` (${via})` : ''} in ${store.path}`, {
    code: 'unknown_profile',
    hint: known.length
      ? `known profiles: ${known.join(', ')}; create one with \`facectl auth login --profile ${name}\``
      : `no profiles yet; create one with \`facectl auth login --profile ${name}\``,
  });
}

/** Errors say where and why, not JSON.parse's message, which quotes the text around the problem (a key's end). */
export function parseConfigText(text: string, path: string): ConfigData {
  const parsed = tryParseJson(text);
  if (!parsed.ok) {
    throw new ConfigFileError(
      `configuration file ${path} is not valid JSON (line ${parsed.line}, column ${parsed.column}: ${parsed.reason})`,
      `fix or remove ${path}; facectl never clears it`,
    );
  }
  const broken = (what: string) =>
    new ConfigFileError(`configuration file ${path} is invalid: ${what}`, `fix or remove ${path} (it was left as is)`);
  if (!isPlainObject(parsed.value)) throw broken('not a JSON object');
  const config = parsed.value as ConfigData;
  if (config.default_profile !== undefined && typeof config.default_profile !== 'string') {
    throw broken('default_profile must be a string');
  }
  if (config.profiles !== undefined) {
    if (!isPlainObject(config.profiles)) throw broken('profiles must be an object');
    for (const [name, profile] of Object.entries(config.profiles)) {
      if (!isPlainObject(profile)) throw broken(`profiles.${name} must be an object`);
      // A setting of another type was read as unset (a base_url of 5 sent the key to the default URL).
      for (const setting of ['api_key', 'api_key_base_url', 'base_url'] as const) {
        const value = profile[setting];
        if (value !== undefined && typeof value !== 'string')
          throw broken(`profiles.${name}.${setting} must be a string`);
      }
    }
  }
  return config;
}

export class ProfileStore {
  constructor(private readonly backend: ConfigBackend) {}

  get path(): string {
    return this.backend.path;
  }

  get defaultProfile(): string {
    return this.backend.read().default_profile ?? 'default';
  }

  getProfile(name: string): ProfileSettings {
    return { ...(this.backend.read().profiles?.[name] ?? {}) };
  }

  listProfiles(): string[] {
    return Object.keys(this.backend.read().profiles ?? {}).sort();
  }

  /** Sets (undefined: removes) settings of one profile, then checks the file read back holds them. */
  async updateProfile(
    profile: string,
    patch: Record<string, unknown>,
    options: { defaultIfFirst?: boolean; unless?: (before: ProfileSettings) => boolean } = {},
  ) {
    checkProfileName(profile);
    let madeDefault = false;
    let before: ProfileSettings = {};
    let refused = false;
    const after = await this.backend.update((data) => {
      // Read under the lock: of writers at once, each replaces what the one before it stored (unless refused).
      before = data.profiles?.[profile] ?? {};
      refused = options.unless?.(before) ?? false;
      if (refused) return data;
      // Decided under the lock: of writers at once, one makes it and says so.
      if (options.defaultIfFirst && data.default_profile === undefined && !data.profiles?.default) {
        madeDefault = profile !== 'default';
        if (madeDefault) data = { ...data, default_profile: profile };
      }
      const profiles = { ...(data.profiles ?? {}) };
      const settings: ProfileSettings = { ...before };
      for (const [key, value] of Object.entries(patch)) {
        if (value === undefined) delete settings[key];
        else settings[key] = value;
      }
      profiles[profile] = settings;
      return { ...data, profiles };
    });
    // Not a named import of node:util: that builds every export of it, lazy ones included (8 M
    // instructions, ~2% of every API command, which reaches this module through the credentials).
    const { isDeepStrictEqual } = process.getBuiltinModule('node:util');
    for (const [key, value] of refused ? [] : Object.entries(patch)) {
      if (!isDeepStrictEqual(after.profiles?.[profile]?.[key], value)) this.notKept(`${key} of profile ${profile}`);
    }
    return { madeDefault, before, refused };
  }

  /** Writes the file unchanged, or if missing makes and locks its directory: whether a later write can be made. */
  async checkWritable(): Promise<void> {
    await this.backend.update((data) => data);
  }

  getGlobal(key: string): unknown {
    return key === 'profiles' ? undefined : this.backend.read()[key];
  }

  async setDefaultProfile(name: string | undefined): Promise<void> {
    if (name !== undefined) checkProfileName(name);
    const after = await this.backend.update(({ default_profile: _old, ...data }) =>
      name === undefined ? data : { ...data, default_profile: name },
    );
    if (after.default_profile !== name) this.notKept('default_profile');
  }

  private notKept(what: string): never {
    throw new ConfigWriteError(
      `configuration file ${this.path}: ${what} was not in the file when read back after writing`,
      undefined,
      'another program may be rewriting the file; run the command again',
    );
  }
}
