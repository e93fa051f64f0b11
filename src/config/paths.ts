import { homedir } from 'node:os';
import { join } from 'node:path';

/** Per-user where conf and env-paths placed it, so that files of earlier versions are found. */
export function configFilePath(env: Readonly<Record<string, string | undefined>>): string {
  if (env.FACECTL_CONFIG_DIR) return join(env.FACECTL_CONFIG_DIR, 'config.json');
  const home = env.HOME || homedir();
  if (process.platform === 'darwin') return join(home, 'Library', 'Preferences', 'facectl', 'config.json');
  if (process.platform === 'win32') {
    return join(env.APPDATA || join(home, 'AppData', 'Roaming'), 'facectl', 'Config', 'config.json');
  }
  return join(env.XDG_CONFIG_HOME || join(home, '.config'), 'facectl', 'config.json');
}

/** Where facectl keeps what it writes as it works (the journals of batches), apart from the configuration. */
export function stateDir(env: Readonly<Record<string, string | undefined>>): string {
  if (env.FACECTL_STATE_DIR) return env.FACECTL_STATE_DIR;
  const home = env.HOME || homedir();
  if (process.platform === 'win32') return join(env.LOCALAPPDATA || join(home, 'AppData', 'Local'), 'facectl', 'State');
  if (process.platform === 'darwin') return join(home, 'Library', 'Application Support', 'facectl');
  return join(env.XDG_STATE_HOME || join(home, '.local', 'state'), 'facectl');
}
