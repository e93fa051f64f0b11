import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run } from '../../src/main.js';
import { eventually } from '../helpers/command-harness.js';
import { call, expectContract } from '../helpers/service.js';
import { createTestContext } from '../helpers/test-context.js';

/**
 * `facectl serve --host`: the banner names the address really bound, and listening on every interface
 * (where the bootstrap keys it prints are usable from the network) is warned of on stderr.
 */

/** Runs `facectl serve ...args` in-process until its banner (or JSON line) is out, then Ctrl-C. */
async function serveUntilUp(args: string[], ready: string) {
  const tc = createTestContext();
  const running = run(['serve', '--port', '0', ...args], tc.ctx);
  await eventually(() => (tc.stdout().includes(ready) ? true : undefined));
  const stdout = tc.stdout();
  const stderr = tc.stderr();
  return {
    stdout,
    stderr,
    stop: async () => {
      tc.interrupt();
      const code = await running;
      await tc.close();
      return { code, stderr: tc.stderr() };
    },
  };
}

const ALL_INTERFACES_WARNING =
  'listening on all interfaces (0.0.0.0): anyone who can reach this machine on port PORT can use the service ' +
  'and its bootstrap keys; use --host 127.0.0.1 to keep it to this machine';

describe('serve --host', () => {
  it('0.0.0.0: the banner shows the bound address and a loopback URL to use; stderr warns first', async () => {
    const served = await serveUntilUp(['--host', '0.0.0.0'], 'Ctrl-C');
    const port = /listening on all interfaces at http:\/\/0\.0\.0\.0:(\d+)\n/.exec(served.stdout)?.[1] as string;
    expect(served.stdout.split('\n').slice(0, 2)).toEqual([
      `Local Face Compilation Service listening on all interfaces at http://0.0.0.0:${port}`,
      `From this machine: http://127.0.0.1:${port}`,
    ]);
    expect(served.stdout).toContain(`Try: facectl auth login --base-url http://127.0.0.1:${port}\n`);
    expect(served.stderr).toBe(`warning: ${ALL_INTERFACES_WARNING.replace('PORT', port)}\n`);
    // The loopback URL the banner gives answers, with a bootstrap key it printed.
    const key = /connect\s+(fcs_\S+)/.exec(served.stdout)?.[1] as string;
    const res = await call({ baseUrl: `http://127.0.0.1:${port}` }, 'getCurrentApiKey', { key });
    expect(expectContract('getCurrentApiKey', res, 200).plan).toBe('connect');
    const end = await served.stop();
    expect(end.code).toBe(0);
  });

  it('0.0.0.0 --json: the warning is a JSON line on stderr at once; stdout the one JSON line', async () => {
    const served = await serveUntilUp(['--host', '0.0.0.0', '--json'], '\n');
    const first = JSON.parse(served.stdout) as { base_url: string };
    const port = new URL(first.base_url).port;
    expect(first.base_url).toBe(`http://127.0.0.1:${port}`);
    expect(served.stderr).toBe(`${JSON.stringify({ warning: ALL_INTERFACES_WARNING.replace('PORT', port) })}\n`);
    const end = await served.stop();
    // A clean stop is no error: exit 0, and every stderr line stays JSON, the stop message a notice.
    expect(end.code).toBe(0);
    const lines = end.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[1] as string)).toEqual({ notice: 'facectl serve stopped' });
  });

  it('the default loopback host: the banner as before and no warning', async () => {
    const served = await serveUntilUp([], 'Ctrl-C');
    expect(served.stdout).toMatch(/^Local Face Compilation Service at http:\/\/127\.0\.0\.1:\d+\n/);
    expect(served.stderr).toBe('');
    // Ctrl-C is how a server is stopped: serve says it stopped, and nothing more; exit 0.
    expect(await served.stop()).toEqual({ code: 0, stderr: 'facectl serve stopped\n' });
  });
});

describe('the serve banner', () => {
  it('says how to log in with a key it shows, never puts a key on a command line, and with --data that its keys are kept', async () => {
    const plain = await serveUntilUp([], 'Ctrl-C');
    expect(plain.stdout).toMatch(/^Bootstrap API keys, one per plan \(new ones at every start\):$/m);
    expect(plain.stdout).toMatch(
      /^Try: facectl auth login --base-url http:\/\/127\.0\.0\.1:\d+\n {5}and paste a key from above\.$/m,
    );
    expect(plain.stdout).not.toContain('FACECTL_API_KEY=');
    expect((await plain.stop()).code).toBe(0);

    const dir = mkdtempSync(join(tmpdir(), 'facectl-banner-'));
    try {
      const kept = await serveUntilUp(['--data', join(dir, 'state.db')], 'Ctrl-C');
      // A newcomer restarted on one file and got a new key each time, under "(the same at every start)".
      expect(kept.stdout).toContain(
        'Bootstrap API keys, one per plan (new at every start; those of earlier starts stay valid):',
      );
      const firstKey = /^ {2}pro +(\S+)$/m.exec(kept.stdout)?.[1];
      expect((await kept.stop()).code).toBe(0);
      const again = await serveUntilUp(['--data', join(dir, 'state.db')], 'Ctrl-C');
      const secondKey = /^ {2}pro +(\S+)$/m.exec(again.stdout)?.[1];
      expect(secondKey).toMatch(/^fcs_/);
      expect(secondKey).not.toBe(firstKey);
      expect((await again.stop()).code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
