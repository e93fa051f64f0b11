import type { IncomingMessage } from 'node:http';
import { matchPath } from '../contract/route.js';
import { HttpError } from './errors.js';
import { readBody } from './http-util.js';
import type { ServiceCore } from './service-core.js';

/**
 * The local OAuth provider's consent page and the callback's result pages. Small, self-contained pages:
 * no scripts, inline styles only, every interpolated value escaped.
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);

/** Headers for every page: no framing (clickjacking of Approve), no scripts, no referrer (codes in URLs). */
export const PAGE_HEADERS: Record<string, string> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'Content-Security-Policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
};

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 32rem; margin: 4rem auto; padding: 0 1rem; color: #222; }
.card { border: 1px solid #ccc; border-radius: 8px; padding: 1.5rem; }
button { font-size: 1rem; padding: 0.5rem 1.25rem; margin-right: 0.5rem; border-radius: 6px; border: 1px solid #888; cursor: pointer; }
button.approve { background: #1f6feb; color: #fff; border-color: #1f6feb; }
</style>
</head>
<body>
<main class="card">
${body}
</main>
</body>
</html>
`;
}

export const resultPage = (title: string, message: string): string =>
  layout(title, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(message)}</p>`);

const FORWARDED = ['response_type', 'client_id', 'redirect_uri', 'state', 'code_challenge', 'code_challenge_method'];

/**
 * The consent page (the provider's, not in the contract): GET shows it, the form POSTs back here and is
 * answered with a 302 to the service's callback (a code, or error=access_denied).
 */
export async function providerPage(svc: ServiceCore, req: IncomingMessage, pathname: string, query: URLSearchParams) {
  const params = matchPath('/provider/{provider}/authorize', pathname);
  if (!params) throw new HttpError(404, 'not_found', 'There is no such page.');
  const provider = params.provider as string;
  if (provider !== svc.provider) throw new HttpError(404, 'unknown_provider', `Unknown provider ${provider}.`);

  if (req.method === 'GET') {
    const { account } = svc.oauth.undecided(provider, query);
    // The authorization request's parameters, posted back with the decision.
    const hidden = FORWARDED.filter((name) => query.has(name))
      .map((name) => `<input type="hidden" name="${name}" value="${escapeHtml(query.get(name) as string)}">`)
      .join('\n');
    const html = layout(
      `Connect ${provider}`,
      `<h1>Connect to ${escapeHtml(provider)}</h1>
<p><strong>facectl (local Face Compilation Service)</strong> asks to use your ${escapeHtml(provider)} account
<strong id="account">${escapeHtml(account)}</strong> for compile interviews.</p>
<form method="post" action="${escapeHtml(pathname)}">
${hidden}
<button type="submit" class="approve" name="decision" value="approve">Approve</button>
<button type="submit" class="deny" name="decision" value="deny">Deny</button>
</form>`,
    );
    return { status: 200, headers: PAGE_HEADERS, body: html };
  }
  if (req.method === 'POST') {
    const form = new URLSearchParams((await readBody(req, 16 * 1024)).toString('utf8'));
    const pending = svc.oauth.undecided(provider, form);
    const decision = form.get('decision');
    if (decision !== 'approve' && decision !== 'deny') {
      throw new HttpError(400, 'invalid_request', 'Choose Approve or Deny.');
    }
    const location = svc.oauth.decide(pending, decision === 'approve');
    return { status: 302, headers: { ...PAGE_HEADERS, Location: location }, body: '' };
  }
  throw new HttpError(405, 'method_not_allowed', 'Use GET or POST.', { Allow: 'GET, POST' });
}
