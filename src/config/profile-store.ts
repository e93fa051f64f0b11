import type { ConfigStore, ProfileSettings } from '../context.js';
import { CliError, ExitCode, UsageError } from '../errors.js';

/**
 * The shape of the configuration file and the profile logic on top of any backend (the conf file in
 * production, memory in tests):
 *
 *   { "default_profile": "work", "profiles": { "default": { "api_key": "...", "base_url": "..." } } }
 */

export interface ConfigData {
  default_profile?: string;
  profiles?: Record<string, ProfileSettings>;
  [key: string]: unknown;
}

export interface ConfigBackend {
  readonly path: string;
  read(): ConfigData;
  write(data: ConfigData): void;
}

export const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** The configuration file is broken (exit 2): reported with its path, never cleared. */
export class ConfigFileError extends CliError {
  constructor(message: string, hint: string, cause?: unknown) {
    super(message, ExitCode.usage, { code: 'config_invalid', hint, cause });
  }
}

/** The configuration could not be written (read-only directory, disk full): exit 1, old file intact. */
export class ConfigWriteError extends CliError {
  constructor(message: string, cause?: unknown) {
    super(message, ExitCode.error, {
      code: 'config_write_failed',
      hint: 'check the permissions of the configuration directory, or set FACECTL_CONFIG_DIR to a writable one',
      cause,
    });
  }
}

export function checkProfileName(name: string): string {
  if (!PROFILE_NAME.test(name)) {
    throw new UsageError(`invalid profile name ${JSON.stringify(name)}`, {
      hint: 'use letters, digits, - and _ (up to 64 characters)',
    });
  }
  return name;
}

/** Checks the parsed file has the shape above, naming the file and the part that is wrong. */
export function checkConfigShape(data: unknown, path: string): ConfigData {
  const broken = (what: string) =>
    new ConfigFileError(`configuration file ${path} is invalid: ${what}`, `fix or remove ${path} (it was left as is)`);
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw broken('not a JSON object');
  const config = data as ConfigData;
  if (config.default_profile !== undefined && typeof config.default_profile !== 'string') {
    throw broken('default_profile must be a string');
  }
  if (config.profiles !== undefined) {
    if (typeof config.profiles !== 'object' || config.profiles === null || Array.isArray(config.profiles)) {
      throw broken('profiles must be an object');
    }
    for (const [name, profile] of Object.entries(config.profiles)) {
      if (typeof profile !== 'object' || profile === null || Array.isArray(profile)) {
        throw broken(`profiles.${name} must be an object`);
      }
    }
  }
  return config;
}

export class ProfileStore implements ConfigStore {
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

  setProfileValue(profile: string, key: string, value: unknown): void {
    checkProfileName(profile);
    // Read-modify-write of the whole file: conf writes it atomically (temp file + rename).
    const data = this.backend.read();
    const profiles = { ...(data.profiles ?? {}) };
    profiles[profile] = { ...(profiles[profile] ?? {}), [key]: value };
    this.backend.write({ ...data, profiles });
  }

  deleteProfileValue(profile: string, key: string): void {
    const data = this.backend.read();
    const current = data.profiles?.[profile];
    if (!current || !(key in current)) return;
    const { [key]: _removed, ...rest } = current;
    this.backend.write({ ...data, profiles: { ...data.profiles, [profile]: rest } });
  }

  getGlobal(key: string): unknown {
    return key === 'profiles' ? undefined : this.backend.read()[key];
  }

  setDefaultProfile(name: string | undefined): void {
    const { default_profile: _old, ...data } = this.backend.read();
    this.backend.write(name === undefined ? data : { ...data, default_profile: checkProfileName(name) });
  }
}

/** A store in memory, for tests (and for `createClient` users who pass settings directly). */
export function createMemoryConfigStore(
  initial: ConfigData = {},
  path = '(memory)',
): ProfileStore & { data: ConfigData } {
  let data: ConfigData = structuredClone(initial);
  const store = new ProfileStore({
    path,
    read: () => structuredClone(data),
    write: (next) => {
      data = structuredClone(next);
    },
  });
  // A getter (not a copy) so tests see what commands wrote after the store was made.
  Object.defineProperty(store, 'data', { get: () => structuredClone(data) });
  return store as ProfileStore & { data: ConfigData };
}
