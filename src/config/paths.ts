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
