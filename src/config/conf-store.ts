import { chmodSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Conf from 'conf';
import { type ConfigData, ConfigFileError, ConfigWriteError, checkConfigShape, ProfileStore } from './profile-store.js';

/**
 * The configuration file, through conf: `$FACECTL_CONFIG_DIR/config.json` when that variable is set,
 * else conf's per-user location for project `facectl` (e.g. ~/.config/facectl/config.json on Linux).
 * The file is written atomically (conf writes a temp file and renames it) with mode 0600 in a 0700
 * directory; a corrupt file is reported with its path and never cleared (clearInvalidConfig: false).
 */
export function openConfigStore(env: Readonly<Record<string, string | undefined>>, warn: (message: string) => void) {
  const dir = env.FACECTL_CONFIG_DIR;
  let conf: Conf<ConfigData>;
  try {
    if (dir) ensurePrivateDirectory(dir, false);
    conf = new Conf<ConfigData>({
      projectName: 'facectl',
      projectSuffix: '',
      ...(dir ? { cwd: dir } : {}),
      configName: 'config',
      configFileMode: 0o600,
      clearInvalidConfig: false,
      // Profile names are keys: no dot-path interpretation of them.
      accessPropertiesByDotNotation: false,
    });
  } catch (error) {
    throw fileError(error, dir ? `${dir}/config.json` : 'the configuration file');
  }
  const path = conf.path;
  if (!dir) ensurePrivateDirectory(dirname(path), true);
  tightenFileMode(path, warn);

  return new ProfileStore({
    path,
    read: () => {
      try {
        return checkConfigShape(conf.store, path);
      } catch (error) {
        throw fileError(error, path);
      }
    },
    write: (data) => {
      try {
        conf.store = data;
      } catch (error) {
        const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
        throw new ConfigWriteError(`cannot write configuration file ${path} (${reason}); it was left unchanged`, error);
      }
    },
  });
}

function fileError(error: unknown, path: string): Error {
  if (error instanceof ConfigFileError) return error;
  const err = error as NodeJS.ErrnoException;
  if (err.name === 'SyntaxError') {
    return new ConfigFileError(
      `configuration file ${path} is not valid JSON (${err.message})`,
      `fix or remove ${path}; facectl never clears it`,
      error,
    );
  }
  if (err.code === 'EACCES' || err.code === 'EPERM') {
    return new ConfigFileError(
      `cannot read configuration file ${path} (${err.code})`,
      `check the permissions of ${path}`,
      error,
    );
  }
  return new ConfigFileError(`cannot use configuration file ${path}: ${err.message}`, `check ${path}`, error);
}

/**
 * Creates the directory 0700. An existing directory that facectl owns (the per-user default) is tightened
 * to 0700; one the user chose with FACECTL_CONFIG_DIR may be shared, so it is left alone.
 */
function ensurePrivateDirectory(dir: string, ours: boolean): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (ours && (statSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700);
  } catch {
    // Reported when the file itself is read or written, with the path.
  }
}

/** A file another tool wrote with a looser mode (e.g. 0644) holds a secret: warn and make it 0600. */
function tightenFileMode(path: string, warn: (message: string) => void): void {
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    return; // not written yet
  }
  if ((mode & 0o077) === 0) return;
  try {
    chmodSync(path, 0o600);
    warn(`configuration file ${path} had mode ${mode.toString(8).padStart(4, '0')}; changed it to 0600`);
  } catch {
    warn(`configuration file ${path} has mode ${mode.toString(8).padStart(4, '0')}; run chmod 600 on it`);
  }
}
