import { homedir } from 'node:os';
import { join } from 'node:path';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Where the configuration file lives: `$FACECTL_CONFIG_DIR/config.json` when that variable is set, else
 * the per-user configuration directory (~/.config/facectl/config.json on Linux, as conf and env-paths
 * placed it, so files written by earlier versions are found where they are).
 */
export function configFilePath(env: Env, platform: NodeJS.Platform = process.platform): string {
  if (env.FACECTL_CONFIG_DIR) return join(env.FACECTL_CONFIG_DIR, 'config.json');
  const home = env.HOME || homedir();
  if (platform === 'darwin') return join(home, 'Library', 'Preferences', 'facectl', 'config.json');
  if (platform === 'win32') {
    return join(env.APPDATA || join(home, 'AppData', 'Roaming'), 'facectl', 'Config', 'config.json');
  }
  return join(env.XDG_CONFIG_HOME || join(home, '.config'), 'facectl', 'config.json');
}

/**
 * Where facectl keeps what it writes as it works (the journals of unfinished batches), apart from the
 * configuration: FACECTL_STATE_DIR when set, else the per-user state directory ($XDG_STATE_HOME/facectl,
 * ~/.local/state/facectl; the local application data folder on Windows).
 */
export function stateDir(env: Env, platform: NodeJS.Platform = process.platform): string {
  if (env.FACECTL_STATE_DIR) return env.FACECTL_STATE_DIR;
  const home = env.HOME || homedir();
  if (platform === 'win32') return join(env.LOCALAPPDATA || join(home, 'AppData', 'Local'), 'facectl', 'State');
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'facectl');
  return join(env.XDG_STATE_HOME || join(home, '.local', 'state'), 'facectl');
}
