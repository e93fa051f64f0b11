import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, runCli } from '../helpers/run-cli.js';
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

  it("the scripts section's lines that start serve, read its URL and the pro key, and stop it work as written", async () => {
    const start = readme.indexOf('rm -f serve.json; facectl serve --port 0 --json > serve.json &');

    expect(start).toBeGreaterThan(0);
    // The whole block, run by bash as it stands (offline: nothing in it may need the internet); its
    // first six lines are the serve part, run alone below.
    const block = readme.slice(start, readme.indexOf('```', start)).trimEnd();
    const lines = block.split('\n');
    const snippet = lines.slice(0, lines.findIndex((l) => l.startsWith('export FACECTL_BASE_URL')) + 1).join('\n');
    expect(snippet.split('\n')).toHaveLength(6);
    // Its trap stops serve when the script ends (quietly when serve has already ended).
    expect(snippet).toContain("trap 'kill $serve 2>/dev/null && wait $serve' EXIT");
    const dir = makeTempDir('facectl-readme-ci-');
    // `facectl` and `jq` on PATH: this checkout's bin, and jq through the jq-web the project depends on
    // (a fresh machine may have no jq).
    const shim = (name: string, body: string) => {
      writeFileSync(join(dir, name), body);
      chmodSync(join(dir, name), 0o755);
    };
    shim('facectl', `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
    writeFileSync(
      join(dir, 'jq.cjs'),
      `const [, , flag, expression, file] = process.argv;\n` +
        `if (flag !== '-r') throw new Error('jq shim: only -r EXPR [FILE]');\n` +
        `require(${JSON.stringify(join(ROOT, 'node_modules', 'jq-web'))}).then((jq) => {\n` +
        `  process.stdout.write(jq.raw(require('node:fs').readFileSync(file ?? 0, 'utf8'), expression, ['-r']) + '\\n');\n` +
        `});\n`,
    );
    shim('jq', `#!/bin/sh\nexec "${process.execPath}" "${join(dir, 'jq.cjs')}" "$@"\n`);
    // serve, started in the background, is stopped however the script ends.
    // A serve.json of an earlier run is there: the snippet must not read it.
    writeFileSync(join(dir, 'serve.json'), '{"base_url":"http://127.0.0.1:9","users":[]}\n');
    // Under set -e: the stop (the snippet's trap) must exit 0, or the script fails.
    const script = `set -eu\n${snippet}\nfacectl auth status --json\n`;
    const options = {
      cwd: dir,
      env: {
        PATH: `${dir}:${process.env.PATH ?? '/usr/bin:/bin'}`,
        HOME: dir,
        FACECTL_CONFIG_DIR: join(dir, 'config'),
        NO_COLOR: '1',
      },
      timeout: 30_000,
    };
    const { stdout, stderr } = await promisify(execFile)('bash', ['-c', script], options);
    expect(stderr).toContain('{"notice":"facectl serve stopped"}');
    expect(stderr).not.toContain('No such process');
    // The whole block: a face, a document submitted and synced, the sync's JSON last on stdout.
    rmSync(join(dir, 'serve.json'), { force: true });
    const whole = await promisify(execFile)('bash', ['-c', `set -euo pipefail\n${block}\n`], options);
    const synced = JSON.parse(whole.stdout.trim().split('\n').at(-1) ?? '');
    expect(synced.document_id).toMatch(/^doc_/);
    expect(whole.stderr).toContain('{"notice":"facectl serve stopped"}');
    // A script that fails part way stops serve too, and keeps its own exit code.
    const failing = await promisify(execFile)('bash', ['-c', `set -eu\n${snippet}\nexit 7\n`], options).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(failing.code).toBe(7);
    expect(failing.stderr).toContain('{"notice":"facectl serve stopped"}');
    // A serve that cannot start (here one that exits at once) ends the script, non-zero, rather than
    // leaving it waiting for serve.json forever.
    const broken = join(dir, 'broken');
    mkdirSync(broken);
    writeFileSync(join(broken, 'facectl'), '#!/bin/sh\necho "serve: cannot listen" >&2\nexit 3\n');
    chmodSync(join(broken, 'facectl'), 0o755);
    rmSync(join(dir, 'serve.json'), { force: true });
    const unstarted = await promisify(execFile)('bash', ['-c', `set -eu\n${snippet}\nexit 0\n`], {
      ...options,
      env: { ...options.env, PATH: `${broken}:${options.env.PATH}` },
      timeout: 10_000,
    }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    // kill -0 failing ends the loop with serve's own exit code (not a timeout's kill, whose code is null).
    expect(unstarted.code).toBe(3);
    expect(unstarted.stderr).toContain('serve: cannot listen');
    // What serve said is all the script says: no `kill: (PID) - No such process` from the loop or the trap.
    expect(unstarted.stderr).toBe('serve: cannot listen\n');
    const status = JSON.parse(stdout);
    expect(status.plan).toBe('pro');
    expect(status.base_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  }, 60_000);
});
