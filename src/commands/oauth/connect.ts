import type { Context } from '../../context.js';
import { type AnswerOf, describeValue } from '../../api/answers.js';
import type { listOAuthConnections } from '../../contract/oauth.js';
import { forProfile, NetworkError, ResponseError } from '../../errors.js';
import { isWebUrl } from '../../io/browser.js';
import { safeJson } from '../../io/output.js';
import { DEFAULT_WAIT_SECONDS, TIMEOUT_FLAG } from '../docs/wait-ready.js';
import { requireArgument, verb } from '../kit.js';
import { CONNECTION_COLUMNS, PROVIDER_ARG, sendOAuth } from './fields.js';

/** `intervalMs`: the pause between two polls of GET /v1/oauth. */
type ConnectOptions = { provider: string; openBrowser: boolean; timeoutSeconds: number; intervalMs?: number };
type Connection = AnswerOf<typeof listOAuthConnections>[number];

export default verb({
  summary: 'Connect a provider in the browser',
  description:
    'Connect a provider: prints the authorize URL on stderr at once (with --json as one JSON line, ' +
    '{"authorize_url": ...}), opens it in a browser (unless --no-browser, SSH, CI or no display), then waits ' +
    'until the approval arrives (--timeout; Ctrl-C stops). A provider connected already: says so and exits 0.',
  args: [PROVIDER_ARG],
  flags: {
    browser: { negate: true, help: 'do not open a browser; open the printed URL yourself (e.g. on another device)' },
    timeout: {
      ...TIMEOUT_FLAG,
      default: String(DEFAULT_WAIT_SECONDS),
      help: 'give up waiting after this many seconds',
    },
  },
  examples: ['facectl oauth connect example', 'facectl oauth connect example --no-browser --timeout 600'],
  run: (ctx, given, provider) =>
    runConnect(ctx, {
      provider: requireArgument('provider', provider),
      openBrowser: given.browser,
      timeoutSeconds: given.timeout,
    }),
});

export async function runConnect(ctx: Context, opts: ConnectOptions) {
  const { authorizeOAuth } = await import('../../contract/oauth.js');
  const { provider } = opts;
  // The list first: a non-Connect plan is refused before a browser opens, and a connected provider needs no URL.
  const before = await findConnection(ctx, provider);
  if (before?.connected) {
    // Where no one can be asked, disconnect refuses to run without --yes.
    const yes = ctx.io.canPrompt() ? '' : ' --yes';
    // Its command for the profile and service this run used, as an error's hint is.
    ctx.out.info(
      forProfile(
        `${provider} is already connected (since ${before.connected_at ?? 'an unknown time'}); nothing to do. ` +
          `To connect another account, run \`facectl oauth disconnect ${provider}${yes}\` first.`,
        ctx.globals.profile,
        ctx.globals.baseUrl,
      ),
    );
    ctx.out.record(before, CONNECTION_COLUMNS);
    return before;
  }
  const url = (await sendOAuth(ctx, authorizeOAuth, { params: { provider } })).authorize_url;
  // Only a web address is printed to open and handed to the opener (a file: URL or `--help` would be run by it).
  if (!isWebUrl(url)) {
    const { method, path, name } = authorizeOAuth;
    throw new ResponseError(
      `unexpected response from ${method} ${path} (${name}): field authorize_url: ` +
        `expected an absolute http:// or https:// URL, came ${describeValue(url)}`,
      { hint: 'nothing was opened: facectl opens only web addresses; run with --debug to see the exchange' },
    );
  }

  // Said at once for a person to act on while we wait (a JSON line under --json); the rest at once on a terminal only.
  if (ctx.out.json) ctx.io.stderr.write(`${safeJson({ authorize_url: url })}\n`);
  else ctx.out.info(`Open this URL in a browser to connect ${provider}:\n  ${url}`);
  const now = { immediate: ctx.io.stderrIsTTY };
  if (opts.openBrowser) {
    const why = ctx.browser.unavailable?.();
    if (why) ctx.out.info(`Not opening a browser here (${why}); ${whereToOpen(url)}.`, now);
    else if (await ctx.browser.open(url)) ctx.out.info('Opened it in your browser; approve the connection there.', now);
    else ctx.out.info(`No browser could be opened (the opener failed); ${whereToOpen(url)}.`, now);
  }

  const deadline = ctx.clock.now().getTime() + opts.timeoutSeconds * 1000;
  const waiting = `Waiting up to ${opts.timeoutSeconds} s for ${provider} to be approved in the browser (Ctrl-C stops waiting)`;
  if (!ctx.io.stderrIsTTY && !ctx.out.json) ctx.out.info(waiting);
  const spinner = ctx.out.spinner(waiting);
  let connection: Connection | undefined;
  try {
    while (!connection?.connected) {
      await ctx.clock.sleep(opts.intervalMs ?? 1000, ctx.signal);
      connection = await findConnection(ctx, provider);
      if (!connection?.connected && ctx.clock.now().getTime() >= deadline) {
        // The spec has no way to learn of a denial (only GET /v1/oauth): say that no approval came, not why.
        throw new NetworkError(
          `${provider} was not connected within ${opts.timeoutSeconds} s: it was not approved in the browser ` +
            '(denied, closed, or not yet done)',
          {
            code: 'timeout',
            hint: `run \`facectl oauth connect ${provider}${opts.openBrowser ? '' : ' --no-browser'}\` again and approve in the browser, or wait longer with --timeout SECONDS`,
          },
        );
      }
    }
  } finally {
    spinner.stop();
  }
  ctx.out.success(`Connected ${provider}`);
  ctx.out.record(connection, CONNECTION_COLUMNS, `${provider} was connected all the same (\`facectl oauth list\`)`);
  return connection;
}

/** A consent page on a loopback address opens only on this machine, or through a forwarded port. */
function whereToOpen(url: string): string {
  const { hostname: host, port } = URL.canParse(url) ? new URL(url) : { hostname: '', port: '' };
  if (!/^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(host)) return 'open the URL above on any device';
  const p = port || '80';
  return `open the URL above in a browser on this machine, or over SSH forward its port first (ssh -L ${p}:${host}:${p} HOST) and open it on yours`;
}

async function findConnection(ctx: Context, provider: string): Promise<Connection | undefined> {
  const { listOAuthConnections } = await import('../../contract/oauth.js');
  return (await sendOAuth(ctx, listOAuthConnections)).find((c) => c.provider === provider);
}
