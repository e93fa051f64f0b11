import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../helpers/run-cli.js';
import { ensureBuilt } from '../helpers/serve-process.js';
import { makeTempDir } from '../helpers/temp.js';

// Issue 12 item 10: what README says about where the configuration lives and how to run from a clone
// is what the built CLI does.
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

beforeAll(() => ensureBuilt(), 120_000);

describe('README, checked against the built CLI', () => {
  it('the configuration lives in ~/.config/facectl/ on Linux, as README says', async () => {
    expect(readme).toContain('`~/.config/facectl/`');
    expect(readme).not.toContain('facectl-nodejs');
    const home = makeTempDir('facectl-home-');
    const result = await runCli(['config', 'set', 'base_url', 'http://127.0.0.1:9'], {
      env: { HOME: home, FACECTL_CONFIG_DIR: undefined, XDG_CONFIG_HOME: undefined },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(join(home, '.config', 'facectl', 'config.json'))).toBe(true);
  });

  it('`npx facectl` runs the clone’s own CLI, as README says', async () => {
    expect(readme).toContain('npx facectl --help');
    const { stdout } = await promisify(execFile)('npx', ['--no-install', 'facectl', '--version'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' },
    });
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(stdout.trim()).toBe(pkg.version);
  });
});
