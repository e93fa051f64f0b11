import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSystemBrowser, type Launch } from '../../src/io/browser.js';
import { makeTempDir } from '../helpers/temp.js';

// Issue 12 item 13: a failing opener with a display set was taken as success (silent spinner); under
// CI the reason was not said. The system browser now watches the opener and says why it does not try.
describe('the system browser', () => {
  const recording = (result: number | 'running') => {
    const calls: string[][] = [];
    const launch: Launch = async (command, args) => {
      calls.push([command, ...args]);
      return result;
    };
    return { calls, launch };
  };

  it('does not try under CI, over SSH or without a display, and says why', async () => {
    for (const [env, why] of [
      [{ CI: 'true', DISPLAY: ':0' }, 'CI is set'],
      [{ SSH_CONNECTION: '1 2 3 4', DISPLAY: ':0' }, 'this is an SSH session'],
      [{}, 'no DISPLAY or WAYLAND_DISPLAY is set'],
    ] as const) {
      const { calls, launch } = recording(0);
      const browser = createSystemBrowser(env, 'linux', launch);
      expect(browser.unavailable()).toBe(why);
      expect(await browser.open('http://127.0.0.1/x')).toBe(false);
      expect(calls).toEqual([]);
    }
  });

  it('with a display: an opener that exits non-zero is a failure, one that exits 0 or keeps running is not', async () => {
    const env = { DISPLAY: ':0' };
    expect(await createSystemBrowser(env, 'linux', recording(3).launch).open('http://x/')).toBe(false);
    expect(await createSystemBrowser(env, 'linux', recording(0).launch).open('http://x/')).toBe(true);
    const running = recording('running');
    expect(await createSystemBrowser(env, 'linux', running.launch).open('http://x/')).toBe(true);
    expect(running.calls).toEqual([['xdg-open', 'http://x/']]);
  });

  it('gives the opener only an absolute http(s) URL: no file:, javascript:, relative URL or option', async () => {
    const { calls, launch } = recording(0);
    const browser = createSystemBrowser({ DISPLAY: ':0' }, 'linux', launch);
    for (const url of ['file:///etc/passwd', 'javascript:alert(1)', '--help', '-x', '', '/authorize', 'http:x']) {
      expect(await browser.open(url), url).toBe(false);
    }
    expect(calls).toEqual([]);
    expect(await browser.open('HTTPS://example.com/authorize?x=1')).toBe(true);
    expect(calls).toEqual([['xdg-open', 'HTTPS://example.com/authorize?x=1']]);
  });

  it('a real xdg-open on PATH that fails (no browser configured) makes open() false', async () => {
    const bin = makeTempDir('facectl-opener-');
    const opener = join(bin, 'xdg-open');
    writeFileSync(opener, '#!/bin/sh\necho "xdg-open: no method available for opening $1" >&2\nexit 3\n');
    chmodSync(opener, 0o755);
    const browser = createSystemBrowser({ DISPLAY: ':0', PATH: `${bin}:/usr/bin:/bin` }, 'linux');
    expect(await browser.open('http://127.0.0.1/authorize')).toBe(false);
    const missing = createSystemBrowser({ DISPLAY: ':0', PATH: makeTempDir('facectl-empty-') }, 'linux');
    expect(await missing.open('http://127.0.0.1/authorize')).toBe(false);
  });
});
