import { lstatSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { directoryRefusal, type Refusal } from './file-safety.js';

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

/**
 * The state directory is checked as the configuration directory is (file-safety): it and the
 * directories facectl makes in it must be the user's and writable by no one else, or another user could
 * plant a symlink where a record is about to be written. The state directory may be a symlink (to where
 * the user keeps it); a directory facectl made in it (`what` given) may not.
 */
export function stateDirectoryRefusal(dir: string, what = 'state directory'): Refusal | undefined {
  if (what !== 'state directory') {
    let info;
    try {
      info = lstatSync(dir);
    } catch {
      return undefined; // made next, 0700
    }
    if (!info.isDirectory()) {
      return {
        problem: `${dir} is not a directory of facectl's (it is ${info.isSymbolicLink() ? 'a symlink' : 'a file'})`,
        fix: `remove ${dir} (facectl makes it again), or set FACECTL_STATE_DIR to a directory of your own`,
      };
    }
  }
  return directoryRefusal(dir, process.getuid?.(), {
    what,
    risk: 'they could read or rewrite the records of your batches',
    swap: 'plant links where facectl writes the records of your batches',
    elsewhere: 'FACECTL_STATE_DIR',
  });
}
