import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigData } from '../../src/config/profile-store.js';
import { currentKeyBody, type FaultServer, json, startFaultServer } from '../helpers/fault-server.js';
import { runInProcess as cli } from '../helpers/unit-harness.js';

/**
 * Issue 22 item 10: `config set base_url` on a profile whose key was saved for another URL left the key
 * behind with only a warning. The warning (and the refusal at the next command) names the command that
 * moves the key (`auth login --stored-key`: checks it at the new URL, keeps it for that one) or re-saves
 * one (`auth login`), and the first does what it says.
 */

const KEY = 'fcs_movingk1_0123456789abcdefABCDEFGHIJ0123';
let old: FaultServer;
let moved: FaultServer;
const answer: Parameters<typeof startFaultServer>[0] = (req, res) => {
  if (req.url === '/v1/auth/api-keys/current' && req.headers.authorization === `Bearer ${KEY}`) {
    json(res, 200, currentKeyBody());
  } else if (req.url === '/v1/faces/ada' && req.headers.authorization === `Bearer ${KEY}`) {
    json(res, 200, { alias: 'ada', created: 1, owned_by: 'usr_1' });
  } else json(res, 401, { detail: 'invalid API key', code: 'not_authenticated' });
};
beforeAll(async () => {
  old = await startFaultServer(answer);
  moved = await startFaultServer(answer);
});
afterAll(async () => {
  await old.close();
  await moved.close();
});

const keys = (server: FaultServer, from: number) => server.requests.slice(from).map((r) => r.headers.authorization);

describe('config set base_url on a profile holding a key saved for another URL', () => {
  it('names the command that moves the key, which checks it at the new URL and keeps it for it', async () => {
    let config: ConfigData = {
      profiles: { work: { base_url: old.baseUrl, api_key: KEY, api_key_base_url: old.baseUrl } },
      default_profile: 'work',
    };
    const set = await cli(['config', 'set', 'base_url', moved.baseUrl], { config });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stderr).toContain(`was saved for ${old.baseUrl} and is not sent to ${moved.baseUrl}`);
    expect(set.stderr).toContain('`facectl auth login --stored-key --profile work`');
    expect(set.stderr).toContain('`facectl auth login --profile work`');
    config = set.tc.config.data;

    // The next command refuses, naming the same command; the new URL has seen no key.
    const from = moved.requests.length;
    const refused = await cli(['faces', 'get', 'ada'], { config });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('`facectl auth login --stored-key --profile work`');
    expect(keys(moved, from)).toEqual([]);

    // The command named: exit 0, the key checked at the new URL and now kept for it.
    const login = await cli(['auth', 'login', '--stored-key', '--profile', 'work'], { config });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain(`the key of profile work is now kept for ${moved.baseUrl}`);
    expect(login.stderr).not.toContain(KEY);
    expect(login.tc.config.data.profiles?.work).toEqual({
      base_url: moved.baseUrl,
      api_key: KEY,
      api_key_base_url: moved.baseUrl,
    });
    const works = await cli(['faces', 'get', 'ada'], { config: login.tc.config.data });
    expect(works.code, works.stderr).toBe(0);
    expect(keys(moved, from)).toEqual([`Bearer ${KEY}`, `Bearer ${KEY}`]);
  });

  it('--stored-key at a URL that refuses the key: exit 3, the key stays bound where it was', async () => {
    const config: ConfigData = {
      profiles: {
        default: { base_url: moved.baseUrl, api_key: 'fcs_refused_0123456789', api_key_base_url: old.baseUrl },
      },
    };
    const login = await cli(['auth', 'login', '--stored-key'], { config });
    expect(login.code).toBe(3);
    expect(login.tc.config.data.profiles?.default?.api_key_base_url).toBe(old.baseUrl);
  });

  it('--stored-key without a stored key, or with --api-key-stdin: exit 2, nothing sent', async () => {
    const from = moved.requests.length;
    const none = await cli(['auth', 'login', '--stored-key'], {
      config: { profiles: { default: { base_url: moved.baseUrl } } },
    });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--stored-key: profile default has no stored key');
    const both = await cli(['auth', 'login', '--stored-key', '--api-key-stdin', '--base-url', moved.baseUrl], {
      stdin: `${KEY}\n`,
    });
    expect(both.code).toBe(2);
    expect(moved.requests.length).toBe(from);
  });
});
