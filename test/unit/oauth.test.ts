import { describe, expect, it } from 'vitest';
import { runConnect } from '../../src/commands/oauth/connect.js';
import { run } from '../../src/main.js';
import { approveConsent, contextFor, eventually, runCommand } from '../helpers/command-harness.js';
import type { AsUserOptions } from '../helpers/command-harness.js';
import type { TestContext } from '../helpers/test-context.js';
import { json } from '../helpers/fault-server.js';
import { useFaultServer } from '../helpers/hooks.js';
import { call, decideConsent, expectContract } from '../helpers/service.js';
import { useService } from '../helpers/service-suite.js';
import { expectRefused, runInProcess } from '../helpers/unit-harness.js';

// A service of its own for each test: no test depends on a connection another one made.
const service = useService({}, { each: true });

/** Connects the Connect-plan account over plain HTTP, as a browser approving the consent page would. */
const connectOverHttp = async () => {
  const { callback } = await decideConsent(service, service.key('connect'), 'approve');
  expect(callback.status, callback.text).toBe(200);
};

const connections = async () =>
  expectContract(
    'listOAuthConnections',
    await call(service, 'listOAuthConnections', { key: service.key('connect') }),
    200,
  );

/** Runs a command line as the Connect-plan user. */
const asConnect = (argv: string[], options: AsUserOptions = {}) =>
  runCommand(service, argv, { plan: 'connect', ...options });

/** Starts runConnect for the example provider as the Connect-plan user: opening the browser, polling every 50 ms. */
const startConnect = (options: AsUserOptions = {}) => {
  const tc = contextFor(service, { plan: 'connect', ...options });
  const connecting = runConnect(tc.ctx, { provider: 'example', openBrowser: true, timeoutSeconds: 30, intervalMs: 50 });
  return { tc, connecting };
};

/** Waits until the command has said `text` on stderr. */
const saidOnStderr = (tc: TestContext, text: string) =>
  eventually(() => (tc.stderr().includes(text) ? true : undefined));

/**
 * Starts `oauth connect example --json` (stderr not a terminal); returns once the browser was given the
 * URL, which stderr has said at once as one JSON line.
 */
const startJsonConnect = async (options: AsUserOptions = {}) => {
  const tc = contextFor(service, { plan: 'connect', ...options });
  const running = run(['oauth', 'connect', 'example', '--json'], tc.ctx);
  const opened = await eventually(() => tc.browserOpened[0]);
  expect(tc.stderr()).toBe(`${JSON.stringify({ authorize_url: opened })}\n`);
  return { tc, running, opened };
};

describe('oauth on a plan other than Connect (case 21)', () => {
  it.each(['connect', 'list', 'disconnect'])(
    'oauth %s: 403 plan_required explained, exit 6, no browser',
    async (verb) => {
      const argv = {
        list: ['oauth', 'list'],
        connect: ['oauth', 'connect', 'example'],
        disconnect: ['oauth', 'disconnect', 'example', '--yes'],
      }[verb] as string[];
      const result = await runCommand(service, argv, { plan: 'standard' });
      expect(result.code).toBe(6);
      expect(result.stderr).toContain('error: OAuth connections are only for the Connect plan');
      expect(result.stderr).toContain('403 plan_required');
      expect(result.stderr.trimEnd().split('\n').at(-1)).toMatch(
        /^OAuth connections need a key of a user on the Connect plan: use one \(`--profile <profile>`/,
      );
      expect(result.tc.browserOpened).toEqual([]);
      expect(result.stdout).toBe('');
    },
  );
});

describe("oauth connect and disconnect of '.' or '..'", () => {
  it.each([
    ['.', ['oauth', 'connect', '.']],
    ['..', ['oauth', 'disconnect', '..', '--yes']],
  ])('%s: exit 2 naming <provider>, nothing sent (not even the list)', async (provider, argv) => {
    const result = await expectRefused(service, argv, [], { plan: 'connect' });
    expect(result.stderr).toContain(`error: <provider>: '${provider}' cannot be sent as a path segment\n`);
    expect(result.tc.browserOpened).toEqual([]);
  });
});

describe('oauth list', () => {
  it('lists the provider, not connected yet; --json is the service array', async () => {
    const piped = await asConnect(['oauth', 'list']);
    expect(piped.code).toBe(0);
    expect(piped.stdout).toBe('example\tfalse\t\n');
    const json = await asConnect(['oauth', 'list', '--json']);
    expect(JSON.parse(json.stdout)).toEqual(await connections());
  });
});

describe('oauth connect', () => {
  it('unknown provider: exit 4 before any browser opens', async () => {
    const result = await asConnect(['oauth', 'connect', 'github']);
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('unknown_provider');
    expect(result.tc.browserOpened).toEqual([]);
  });

  it('--no-browser: prints the URL, opens nothing, and times out with exit 8 when no approval comes', async () => {
    const result = await asConnect(['oauth', 'connect', 'example', '--no-browser', '--timeout', '5'], {
      now: '2026-03-15T12:00:00Z', // virtual clock: the five seconds pass at once
    });
    expect(result.code).toBe(8);
    expect(result.stderr).toMatch(
      /Open this URL in a browser to connect example:\n {2}http:\/\/127\.0\.0\.1:\d+\/provider\/example\/authorize\?/,
    );
    // Without a terminal (no spinner) the wait is said as a line, with how to end it.
    expect(result.stderr).toContain(
      'Waiting up to 5 s for example to be approved in the browser (Ctrl-C stops waiting)\n',
    );
    expect(result.stderr).toContain('error: example was not connected within 5 s');
    // The command to run again keeps --no-browser (a newcomer's finding).
    expect(result.stderr).toContain('run `facectl oauth connect example --no-browser` again');
    expect(result.tc.browserOpened).toEqual([]);
    expect((await connections())[0].connected).toBe(false);
  });

  it('Deny on the consent page: the wait ends at --timeout, exit 8, a message that claims no cause it cannot know', async () => {
    const tc = contextFor(service, { plan: 'connect' });
    const running = run(['oauth', 'connect', 'example', '--timeout', '1'], tc.ctx);
    const url = await eventually(() => tc.browserOpened[0]);
    await approveConsent(url, 'deny');
    expect(await running).toBe(8);
    await tc.close();
    expect(tc.stdout()).toBe('');
    const lines = tc.stderr().trimEnd().split('\n');
    expect(lines.at(-2)).toBe(
      'error: example was not connected within 1 s: it was not approved in the browser (denied, closed, or not yet done)',
    );
    expect(lines.at(-1)).toBe(
      'run `facectl oauth connect example` again and approve in the browser, or wait longer with --timeout SECONDS',
    );
    expect((await connections())[0].connected).toBe(false);
  });

  it('Ctrl-C while waiting is exit 130', async () => {
    const tc = contextFor(service, { plan: 'connect' });
    const running = run(['oauth', 'connect', 'example'], tc.ctx);
    await eventually(() => (tc.browserOpened.length > 0 ? true : undefined));
    tc.interrupt();
    expect(await running).toBe(130);
    await tc.close();
    expect((await connections())[0].connected).toBe(false);
  });

  it('opens the browser, waits with the URL on stderr, and succeeds once the consent page is approved', async () => {
    // --json with stderr a terminal: a person is there, the URL is said at once.
    const { tc, connecting } = startConnect({ globals: { json: true }, stderrIsTTY: true });
    const url = await eventually(() => tc.browserOpened[0]);
    expect(tc.stderr()).toContain(url);
    expect(await approveConsent(url)).toContain('Connected to example');
    const connection = await connecting;
    await tc.close();
    expect(connection).toMatchObject({ provider: 'example', connected: true });
    expect(JSON.parse(tc.stdout())).toEqual(connection);
    expect((await connections())[0]).toEqual(connection);
  });

  it('when the stub browser cannot open, says so and still waits for the approval', async () => {
    const { tc, connecting } = startConnect({ browserOpens: false });
    const url = await eventually(() => tc.browserOpened[0]);
    await saidOnStderr(tc, 'No browser could be opened');
    await approveConsent(url);
    const connection = await connecting;
    await tc.close();
    expect(connection.connected).toBe(true);
  });
});

describe('oauth connect --json, stderr not a terminal: the URL as a JSON line at once, then JSON only', () => {
  const authorizeUrl = /^http:\/\/127\.0\.0\.1:\d+\/provider\/example\/authorize\?\S+$/;

  it('a timeout: {"authorize_url"} first, then the error document with the other messages', async () => {
    const result = await asConnect(['oauth', 'connect', 'example', '--json', '--timeout', '5'], {
      browserUnavailable: 'CI is set',
      now: '2026-03-15T12:00:00Z', // virtual clock: the five seconds pass at once
    });
    expect(result.code).toBe(8);
    expect(result.stdout).toBe('');
    const lines = result.stderr.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('');
    expect(Object.keys(JSON.parse(lines[0] as string))).toEqual(['authorize_url']);
    expect(JSON.parse(lines[0] as string).authorize_url).toMatch(authorizeUrl);
    const { error } = JSON.parse(lines[1] as string);
    expect(error.code).toBe('timeout');
    expect(error.message).toBe(
      'example was not connected within 5 s: it was not approved in the browser (denied, closed, or not yet done)',
    );
    // The consent page is on 127.0.0.1: it opens on this machine, or through a forwarded port.
    expect(error.warnings).toEqual([
      expect.stringMatching(
        /^Not opening a browser here \(CI is set\); open the URL above in a browser on this machine, or over SSH forward its port first \(ssh -L (\d+):127\.0\.0\.1:\1 HOST\) and open it on yours\.$/m,
      ),
    ]);
  });

  it('interrupted: exit 130; the URL line, then one error document', async () => {
    const { tc, running, opened } = await startJsonConnect({ globals: { json: true } });
    tc.interrupt();
    expect(await running).toBe(130);
    await tc.close();
    const [urlLine, errorLine, end] = tc.stderr().split('\n');
    expect(JSON.parse(urlLine as string)).toEqual({ authorize_url: opened });
    expect(JSON.parse(errorLine as string).error.warnings).toEqual([
      'Opened it in your browser; approve the connection there.',
    ]);
    expect(end).toBe('');
    expect(tc.stdout()).toBe('');
  });

  it('success: the connection on stdout, the held messages printed on stderr at the end', async () => {
    const { tc, running, opened } = await startJsonConnect();
    await approveConsent(opened);
    expect(await running).toBe(0);
    await tc.close();
    expect(JSON.parse(tc.stdout())).toMatchObject({ provider: 'example', connected: true });
    expect(tc.stderr()).toBe(
      `${JSON.stringify({ authorize_url: opened })}\n` +
        `${JSON.stringify({ notice: 'Opened it in your browser; approve the connection there.' })}\n`,
    );
  });
});

describe('oauth connect when the provider is connected already', () => {
  it('says so and ends at once, exit 0: the connection on stdout, no authorize URL asked for, no browser', async () => {
    await connectOverHttp();
    const [connected] = await connections();
    const authorizeBefore = service.stats.byRoute.authorizeOAuth ?? 0;
    const piped = await asConnect(['oauth', 'connect', 'example', '--timeout', '600']);
    expect(piped.code).toBe(0);
    expect(piped.stdout).toBe(`provider\texample\nconnected\ttrue\nconnected_at\t${connected.connected_at}\n`);
    // No one to ask: the disconnect it names carries --yes, which it then needs.
    expect(piped.stderr).toBe(
      `example is already connected (since ${connected.connected_at}); nothing to do. ` +
        'To connect another account, run `facectl oauth disconnect example --yes` first.\n',
    );
    expect(piped.tc.browserOpened).toEqual([]);
    // On a terminal disconnect asks, so the command is the plain one.
    const terminal = await asConnect(['oauth', 'connect', 'example'], { stdinIsTTY: true, stdoutIsTTY: true });
    expect(terminal.code).toBe(0);
    expect(terminal.stderr.replace(/\s+/g, ' ')).toContain(
      'To connect another account, run `facectl oauth disconnect example` first.',
    );

    // Run with --base-url, the command it names carries it (a ring pasted it and reached the default service).
    const elsewhere = await asConnect(['oauth', 'connect', 'example', '--base-url', service.baseUrl]);
    expect(elsewhere.code).toBe(0);
    expect(elsewhere.stderr).toContain(
      `run \`facectl oauth disconnect example --yes --base-url ${service.baseUrl}\` first.`,
    );

    const json = await asConnect(['oauth', 'connect', 'example', '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(connected);
    expect(json.stderr).toContain('example is already connected');
    expect(service.stats.byRoute.authorizeOAuth ?? 0).toBe(authorizeBefore);
    // The connection is as it was.
    expect(await connections()).toEqual([connected]);
  });
});

describe('oauth disconnect', () => {
  it('without a terminal and without --yes: exit 2 naming --yes before anything is sent (the README: nothing sent)', async () => {
    await connectOverHttp();
    const result = await asConnect(['oauth', 'disconnect', 'example']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'error: --yes is required to disconnect when not running interactively (standard input is not a terminal)\n' +
        'run `facectl oauth disconnect example --yes`\n',
    );
    expect(service.stats.byRoute.listOAuthConnections ?? 0).toBe(0);
    expect(service.stats.byRoute.disconnectOAuth ?? 0).toBe(0);
    expect((await connections())[0].connected).toBe(true);
  });

  it('--yes, not connected: exit 4 not_connected at once, nothing DELETEd', async () => {
    const result = await asConnect(['oauth', 'disconnect', 'example', '--yes']);
    expect(result.code).toBe(4);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'error: example is not connected; nothing to disconnect\n' +
        'nothing to do: that provider is not connected (`facectl oauth list` shows the connections)\n',
    );
    expect(service.stats.byRoute.listOAuthConnections).toBe(1);
    expect(service.stats.byRoute.disconnectOAuth ?? 0).toBe(0);

    const json = await asConnect(['oauth', 'disconnect', 'example', '--yes', '--json']);
    expect(json.code).toBe(4);
    expect(JSON.parse(json.stderr)).toMatchObject({ error: { code: 'not_connected' } });
  });

  it('on a terminal asks first: "no" keeps the connection (exit 1, not 130), "yes" disconnects', async () => {
    await connectOverHttp();
    const onTerminal = (answer: boolean) =>
      asConnect(['oauth', 'disconnect', 'example'], { stdinIsTTY: true, stdoutIsTTY: true, answers: [answer] });
    const declined = await onTerminal(false);
    // 130 is Ctrl-C's (README); a declined confirmation is the user's choice: exit 1, said as gh says it, no "error:".
    expect(declined.code).toBe(1);
    expect(declined.stdout).toBe('');
    expect(declined.stderr).toBe('Not disconnected: example is still connected\n');
    expect((await connections())[0].connected).toBe(true);
    const asJson = await asConnect(['oauth', 'disconnect', 'example', '--json'], {
      stdinIsTTY: true,
      stdoutIsTTY: true,
      answers: [false],
    });
    expect(asJson.code).toBe(1);
    expect(JSON.parse(asJson.stderr)).toEqual({
      error: { code: 'declined', message: 'Not disconnected: example is still connected' },
    });
    expect((await connections())[0].connected).toBe(true);

    const accepted = await onTerminal(true);
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(accepted.tc.prompts[0]?.kind).toBe('confirm');
    // The result is said once on a terminal (not as a table and again as a check line).
    const said = `${accepted.stdout}${accepted.stderr}`.match(/Disconnected from example/g) ?? [];
    expect({ stdout: accepted.stdout, said: said.length }).toEqual({ stdout: '', said: 1 });
    expect((await connections())[0].connected).toBe(false);
  });

  it('piped with --yes: the result once, as one line on stderr (no data on stdout); the record under --json', async () => {
    await connectOverHttp();
    const result = await asConnect(['oauth', 'disconnect', 'example', '--yes']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('Disconnected from example\n');
    await connectOverHttp();
    const asJson = await asConnect(['oauth', 'disconnect', 'example', '--yes', '--json']);
    expect(JSON.parse(asJson.stdout)).toEqual({ detail: 'Disconnected from example' });
  });

  it('--yes in a script; disconnecting what is not connected is exit 4', async () => {
    const result = await asConnect(['oauth', 'disconnect', 'example', '--yes', '--json']);
    expect(result.code).toBe(4);
    expect(result.stdout).toBe('');
    expect(JSON.parse(result.stderr)).toEqual({
      error: {
        code: 'not_connected',
        message: 'example is not connected; nothing to disconnect',
        hint: 'nothing to do: that provider is not connected (`facectl oauth list` shows the connections)',
      },
    });
    expect(service.stats.byRoute.disconnectOAuth ?? 0).toBe(0);
  });

  it('not connected, on a terminal: said at once, exit 4, no confirmation asked, no DELETE sent', async () => {
    const result = await asConnect(['oauth', 'disconnect', 'example'], {
      stdinIsTTY: true,
      stdoutIsTTY: true,
      answers: [true],
    });
    expect(result.code).toBe(4);
    expect(result.tc.prompts).toEqual([]);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'error: example is not connected; nothing to disconnect\n' +
        'nothing to do: that provider is not connected (`facectl oauth list` shows the connections)\n',
    );
    expect(service.stats.byRoute.listOAuthConnections).toBe(1);
    expect(service.stats.byRoute.disconnectOAuth ?? 0).toBe(0);

    const unknown = await asConnect(['oauth', 'disconnect', 'github'], { stdinIsTTY: true, stdoutIsTTY: true });
    expect(unknown.code).toBe(4);
    expect(unknown.tc.prompts).toEqual([]);
    expect(unknown.stderr).toContain(
      'error: github is not connected; nothing to disconnect (the service offers: example)\n',
    );
  });
});

describe('oauth connect: what it says about the browser', () => {
  it('where no browser can appear (CI), it says why and does not try', async () => {
    const { tc, connecting } = startConnect({ browserUnavailable: 'CI is set' });
    const url = await eventually(() => /https?:\/\/\S+authorize\S*/.exec(tc.stderr())?.[0]);
    expect(tc.stderr()).toMatch(
      /^Not opening a browser here \(CI is set\); open the URL above in a browser on this machine, or over SSH forward its port first \(ssh -L (\d+):127\.0\.0\.1:\1 HOST\) and open it on yours\.$/m,
    );
    expect(tc.stderr()).not.toContain('No browser could be opened');
    expect(tc.browserOpened).toEqual([]);
    await approveConsent(url);
    await connecting;
    await tc.close();
  });

  it('when the opener fails, it says so at once and keeps waiting; when it works, it says so', async () => {
    const { tc: failing, connecting } = startConnect({ browserOpens: false });
    const url = await eventually(() => failing.browserOpened[0]);
    await saidOnStderr(failing, 'No browser could be opened (the opener failed)');
    await approveConsent(url);
    await connecting;
    await failing.close();
    // Disconnected again, so that the second connect has something to wait for.
    expectContract(
      'disconnectOAuth',
      await call(service, 'disconnectOAuth', { key: service.key('connect'), params: { provider: 'example' } }),
      200,
    );

    const { tc: working, connecting: again } = startConnect();
    const second = await eventually(() => working.browserOpened[0]);
    await saidOnStderr(working, 'Opened it in your browser');
    await approveConsent(second);
    await again;
    await working.close();
  });
});

describe('oauth connect: an authorize_url that is not a web address', () => {
  const fake = useFaultServer();

  // A tester's fake service: these went to xdg-open (`--help` and `-x` as its options), "" was printed and waited on.
  it.each([
    ['file:///etc/passwd', '"file:///etc/passwd"'],
    ['javascript:alert(1)', '"javascript:alert(1)"'],
    ['--help', '"--help"'],
    ['-x', '"-x"'],
    ['', '""'],
    ['/provider/example/authorize', '"/provider/example/authorize"'],
    ['\x1b[2Jhttp://x/', '"\\u001b[2Jhttp://x/"'],
    // A ring's: a web address with a line break or ESC inside went whole to the opener, and printed a line of its own.
    ['http://a/x\r\nFAKE\x1b[31mLINE', '"http://a/x\\r\\nFAKE\\u001b[31mLINE"'],
    ['http://a/x y', '"http://a/x y"'],
  ])('%j: exit 1 naming authorize_url and what came, nothing opened, no wait', async (url, shown) => {
    fake.handle((req, res) =>
      json(res, 200, req.url === '/v1/oauth' ? [{ provider: 'example', connected: false }] : { authorize_url: url }),
    );
    const before = fake.requests.length;
    for (const flags of [[], ['--no-browser']]) {
      const result = await runInProcess(['oauth', 'connect', 'example', '--timeout', '600', ...flags], {
        baseUrl: fake.baseUrl,
        apiKey: 'fcs_fake',
        now: '2026-03-15T12:00:00Z',
      });
      expect(result.code, result.stderr).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(
        'error: unexpected response from GET /v1/oauth/{provider}/authorize (authorizeOAuth): field authorize_url: ' +
          `expected an absolute http:// or https:// URL, came a string ${shown}\n` +
          'nothing was opened: facectl opens only web addresses; run with --debug to see the exchange\n',
      );
      expect(result.tc.browserOpened).toEqual([]);
    }
    // The list, then the URL; no polling after it.
    expect(fake.requests.slice(before).map((r) => r.url)).toEqual([
      '/v1/oauth',
      '/v1/oauth/example/authorize',
      '/v1/oauth',
      '/v1/oauth/example/authorize',
    ]);
  });
});
