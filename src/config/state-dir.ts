import { homedir } from 'node:os';
import { join } from 'node:path';

type Env = Readonly<Record<string, string | undefined>>;

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
