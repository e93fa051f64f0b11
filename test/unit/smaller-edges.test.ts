import { describe, expect, it } from 'vitest';
import { runInProcess as cli } from '../helpers/unit-harness.js';

/** Issue 22 item 11: the smaller edges a new user and a breaker met, each as they would check it. */

const twoProfiles = {
  default_profile: 'work',
  profiles: {
    work: { base_url: 'http://127.0.0.1:1', api_key: 'fcs_work_0123456789', api_key_base_url: 'http://127.0.0.1:1' },
    home: { base_url: 'http://127.0.0.1:2' },
  },
};

describe('a command that prints no data says what it did in one line, piped too', () => {
  it.each([
    ['auth switch home', ['auth', 'switch', 'home'], 'Switched to profile home (http://127.0.0.1:2)'],
    ['auth logout', ['auth', 'logout'], 'Removed the API key of profile work'],
    [
      'config set base_url',
      ['config', 'set', 'base_url', 'http://127.0.0.1:3', '--profile', 'home'],
      'Set base_url to http://127.0.0.1:3 in profile home',
    ],
  ])('%s: stdout empty, one line on stderr (a check mark only on a terminal)', async (_name, argv, said) => {
    const piped = await cli(argv, { config: structuredClone(twoProfiles) });
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout).toBe('');
    expect(piped.stderr).toBe(`${said}\n`);
    const terminal = await cli(argv, {
      config: structuredClone(twoProfiles),
      stdoutIsTTY: true,
      env: { NO_COLOR: '1' },
    });
    expect(terminal.stderr).toBe(`✓ ${said}\n`);
  });
});
