import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Contender, race, rounds } from '../helpers/concurrent.js';
import { currentKeyBody, json } from '../helpers/fault-server.js';
import { BIN, makeConfigDir, ROOT, runCli } from '../helpers/run-cli.js';
import { ensureBuilt, type FaultServer, KEY, startFaultServer } from './support.js';

// Case 44 of docs/reliability.md: N writers of one config file at the same moment (real processes,
// released together by test/helpers/concurrent.ts), many rounds; every profile is in the file afterwards
// and "Saved" / exit 0 is reported only for what is in the file.

let server: FaultServer;
beforeAll(async () => {
  ensureBuilt();
  server = await startFaultServer((req, res) => {
    if (req.method === 'POST' && req.url === '/v1/auth/api-keys') {
      const id = randomBytes(4).toString('hex');
      const key = `fcs_${id}_${randomBytes(16).toString('hex')}`;
      json(res, 201, { ...currentKeyBody(), id: `key_${id}`, key, key_prefix: `fcs_${id}` });
    } else if (req.url === '/v1/auth/api-keys/current') json(res, 200, currentKeyBody());
    else json(res, 404, { detail: 'no', code: 'not_found' });
  });
});
afterAll(() => server.close());

function cli(dir: string, args: string[], extra: Record<string, string> = {}, stdin = ''): Contender {
  return {
    command: process.execPath,
    args: [BIN, ...args],
    cwd: ROOT,
    stdin,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      NO_COLOR: '1',
      FACECTL_CONFIG_DIR: dir,
      FACECTL_STATE_DIR: join(dir, 'state'),
      FACECTL_PROFILE: undefined,
      FACECTL_API_KEY: undefined,
      FACECTL_BASE_URL: server.baseUrl,
      ...extra,
    },
  };
}

describe('case 44: writers of one config file at once', () => {
  it('N `keys create --save`, `auth login` and `config set` at once, 8 rounds of 8 processes -> every profile is in the file; losses 0', async () => {
    const writers = { keys: 4, login: 2, set: 2 };
    const figures = await rounds(8, async (round) => {
      const dir = makeConfigDir();
      const expected: { profile: string; key: string; value: string; index: number }[] = [];
      const contenders: Contender[] = [];
      for (let i = 0; i < writers.keys; i++) {
        expected.push({ profile: `k${i}`, key: 'api_key', value: '', index: contenders.length });
        contenders.push(
          cli(dir, ['keys', 'create', '--save', '--json', '--profile', `k${i}`], { FACECTL_API_KEY: KEY }),
        );
      }
      for (let i = 0; i < writers.login; i++) {
        const key = `fcs_login${i}${round}_${randomBytes(12).toString('hex')}`;
        expected.push({ profile: `l${i}`, key: 'api_key', value: key, index: contenders.length });
        contenders.push(cli(dir, ['auth', 'login', '--api-key-stdin', '--profile', `l${i}`], {}, `${key}\n`));
      }
      for (let i = 0; i < writers.set; i++) {
        const url = `http://127.0.0.1:${10_000 + round * 10 + i}`;
        expected.push({ profile: `s${i}`, key: 'base_url', value: url, index: contenders.length });
        contenders.push(cli(dir, ['config', 'set', 'base_url', url, '--profile', `s${i}`]));
      }
      const results = await race(contenders);
      for (const r of results) expect(r.code, r.stderr).toBe(0);
      const file = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
      // No lock or temp file is left behind.
      expect(readdirSync(dir).filter((name) => name !== 'state')).toEqual(['config.json']);
      let lost = 0;
      for (const want of expected) {
        const result = results[want.index];
        const value = want.value || JSON.parse(result?.stdout ?? '{}').key;
        if (want.profile.startsWith('k')) {
          // Under --json each stderr line is JSON; the save is a notice.
          const notices = (result?.stderr ?? '')
            .trimEnd()
            .split('\n')
            .map((line) => (JSON.parse(line) as { notice?: string }).notice);
          expect(notices).toContainEqual(expect.stringMatching(/^Saved key fcs_\w+… in profile "k\d"/));
        }
        if (file.profiles?.[want.profile]?.[want.key] !== value) lost++;
      }
      // The first profile of the fresh file becomes the default: one process says so, and it is the one
      // in the file (a breaker saw two or three claim it, and the first replaced).
      const claims = expected.filter(({ index }) => results[index]?.stderr.includes(' is now the default profile'));
      expect(claims.map((c) => c.profile)).toEqual([file.default_profile]);
      return { processes: contenders.length, lost };
    });
    const lost = figures.reduce((sum, f) => sum + f.lost, 0);
    console.log(
      `case 44: ${figures.length} rounds x ${figures[0]?.processes} processes at once: ${lost} profiles lost`,
    );
    expect(lost).toBe(0);
  }, 240_000);
});

describe('case 44: `keys create --save` into one profile at once', () => {
  it('4 at once into one new profile, 8 rounds -> the file keeps one key, and each of the other three is said replaced', async () => {
    const figures = await rounds(8, async () => {
      const dir = makeConfigDir();
      const results = await race(
        Array.from({ length: 4 }, () =>
          cli(dir, ['keys', 'create', '--save', '--yes', '--json', '--profile', 'shared'], { FACECTL_API_KEY: KEY }),
        ),
      );
      for (const r of results) expect(r.code, r.stderr).toBe(0);
      const made = results.map((r) => JSON.parse(r.stdout).key as string);
      const file = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
      const kept = file.profiles.shared.api_key as string;
      expect(made).toContain(kept);
      // Each save replaced what the one before it stored (read under the lock): three warnings, naming
      // the three keys not kept. A breaker saw one warning for two keys replaced.
      const warnings = results.flatMap((r) =>
        r.stderr
          .trimEnd()
          .split('\n')
          .map((line) => (JSON.parse(line) as { warning?: string }).warning)
          .filter((w): w is string => w?.startsWith('replaced key') ?? false),
      );
      const replaced = made.filter((key) => key !== kept).map((key) => `replaced key ${key.slice(0, 12)}…`);
      expect(warnings.map((w) => w.slice(0, replaced[0]?.length)).sort()).toEqual(replaced.sort());
      return { warnings: warnings.length };
    });
    expect(figures.map((f) => f.warnings)).toEqual(Array(8).fill(3));
  }, 120_000);
});

describe('case 44: `keys create --save` without --yes into one empty profile at once', () => {
  it('2 at once, 6 rounds -> one saves; the other prints its key, exits 1 and replaces nothing (no consent)', async () => {
    // A breaker saw later ones print `replaced key fcs_…` without --yes: the empty profile they were
    // checked against was filled meanwhile by another one.
    const round = async () => {
      const dir = makeConfigDir();
      const all = await race(
        Array.from({ length: 2 }, () =>
          cli(dir, ['keys', 'create', '--save', '--json', '--profile', 'shared'], { FACECTL_API_KEY: KEY }),
        ),
      );
      // One that started after the other saved is asked for --yes before anything is sent (exit 2, no key).
      const results = all.filter((r) => r.code !== 2 || r.stdout !== '');
      const made = results.map((r) => JSON.parse(r.stdout).key as string);
      const kept = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).profiles.shared.api_key as string;
      expect(made).toContain(kept);
      for (const [i, r] of results.entries()) {
        expect(r.stderr).not.toContain('replaced key');
        if (made[i] === kept) {
          expect(r.code, r.stderr).toBe(0);
          continue;
        }
        expect(r.code, r.stderr).toBe(1);
        const error = JSON.parse(r.stderr.trimEnd().split('\n').at(-1) ?? '').error;
        expect(error).toMatchObject({
          code: 'save_failed',
          message:
            `the key was created (shown above) but not saved: profile shared now holds another key ` +
            `(${kept.slice(0, 12)}…), stored meanwhile, which was not replaced`,
          hint:
            'copy the key from above into `facectl auth login --profile <new-name>` to keep both (a name no profile has yet), or into ' +
            '`facectl auth login --profile shared` to replace the other (`keys create --save --yes` replaces without asking)',
        });
      }
      return { raced: results.length === 2 };
    };
    // The case is met only where both got past the check: more rounds (at most 24) while none has, as on a
    // loaded machine one may start after the other has saved in every round of a set.
    let raced = 0;
    for (let set = 0; set < 4 && raced === 0; set++) raced += (await rounds(6, round)).filter((f) => f.raced).length;
    expect(raced).toBeGreaterThan(0);
  }, 180_000);
});

describe('case 44: removals and additions at once', () => {
  it('N `auth logout` and N `config set` on other profiles at once, 5 rounds -> each removal and each addition holds', async () => {
    const figures = await rounds(5, async (round) => {
      const dir = makeConfigDir();
      const profiles: Record<string, { api_key: string; api_key_base_url: string }> = {};
      for (let i = 0; i < 3; i++) {
        profiles[`out${i}`] = { api_key: `fcs_out${i}${round}abcd_0123456789`, api_key_base_url: server.baseUrl };
      }
      writeFileSync(join(dir, 'config.json'), JSON.stringify({ profiles }), { mode: 0o600 });
      const contenders: Contender[] = [];
      for (let i = 0; i < 3; i++) contenders.push(cli(dir, ['auth', 'logout', '--profile', `out${i}`]));
      for (let i = 0; i < 3; i++) {
        contenders.push(cli(dir, ['config', 'set', 'base_url', `http://127.0.0.1:${7000 + i}`, '--profile', `in${i}`]));
      }
      const results = await race(contenders);
      for (const r of results) expect(r.code, r.stderr).toBe(0);
      const file = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
      let wrong = 0;
      for (let i = 0; i < 3; i++) {
        if (file.profiles[`out${i}`]?.api_key !== undefined) wrong++; // a removed key came back
        if (file.profiles[`in${i}`]?.base_url !== `http://127.0.0.1:${7000 + i}`) wrong++; // an addition lost
      }
      return { processes: contenders.length, wrong };
    });
    const wrong = figures.reduce((sum, f) => sum + f.wrong, 0);
    console.log(`case 44 (removals): ${figures.length} rounds x ${figures[0]?.processes} processes: ${wrong} wrong`);
    expect(wrong).toBe(0);
  }, 180_000);
});

describe('where the configuration is created', () => {
  it('under umask 000 the directories facectl creates (~/.config, ~/.config/facectl) are 0700 and the file 0600', () => {
    const home = makeConfigDir();
    const result = spawnSync(
      'bash',
      ['-c', 'umask 000; exec "$0" "$1" config set base_url http://127.0.0.1:5', process.execPath, BIN],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, NO_COLOR: '1' }, encoding: 'utf8' },
    );
    expect(result.status, result.stderr).toBe(0);
    const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
    expect(mode(join(home, '.config'))).toBe('700');
    expect(mode(join(home, '.config', 'facectl'))).toBe('700');
    expect(mode(join(home, '.config', 'facectl', 'config.json'))).toBe('600');
  });

  it('read-only commands (`auth status`, `config list`, `config get`) create no configuration directory', async () => {
    const home = makeConfigDir();
    for (const args of [
      ['auth', 'status'],
      ['config', 'list'],
      ['config', 'get', 'base_url'],
    ]) {
      const result = await runCli(args, { env: { HOME: home, FACECTL_CONFIG_DIR: undefined } });
      expect(result.timedOut, result.stderr).toBe(false);
      expect(existsSync(join(home, '.config')), args.join(' ')).toBe(false);
    }
  });
});

describe('a corrupt configuration file in the per-user location (issue 12, item 8)', () => {
  it('the first line of the error names the usable path, as doctor does, and the file is untouched', async () => {
    const home = makeConfigDir();
    const path = join(home, '.config', 'facectl', 'config.json');
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(path, '{"profiles": {broken', { mode: 0o600 });
    for (const args of [['auth', 'status'], ['config', 'set', 'base_url', 'http://127.0.0.1:5'], ['doctor']]) {
      const result = await runCli(args, { env: { HOME: home, FACECTL_CONFIG_DIR: undefined } });
      expect(result.code, args.join(' ')).not.toBe(0);
      if (args[0] === 'doctor') expect(result.stdout).toContain(`configuration file ${path} is not valid JSON (line 1`);
      else expect(result.stderr.split('\n')[0]).toContain(`error: configuration file ${path} is not valid JSON (`);
      expect(readFileSync(path, 'utf8')).toBe('{"profiles": {broken');
    }
  });
});
