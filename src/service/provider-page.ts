import type { IncomingMessage } from 'node:http';
import { matchPath } from '../contract/route.js';
import { HttpError } from './errors.js';
import { type Reply, readBody } from './http-util.js';
import { consentPage, PAGE_HEADERS } from './oauth-pages.js';
import type { ServiceCore } from './service-core.js';

/**
 * The local OAuth provider's consent page (the provider's, not in the contract): GET shows it, the form
 * POSTs back here and is answered with a 302 to the service's callback (a code, or error=access_denied).
 */
const CONSENT_PATH = '/provider/{provider}/authorize';
const FORM_LIMIT = 16 * 1024;
const FORWARDED = ['response_type', 'client_id', 'redirect_uri', 'state', 'code_challenge', 'code_challenge_method'];

export async function providerPage(
  svc: ServiceCore,
  req: IncomingMessage,
  pathname: string,
  query: URLSearchParams,
): Promise<Reply> {
  const params = matchPath(CONSENT_PATH, pathname);
  if (!params) throw new HttpError(404, 'not_found', 'There is no such page.');
  const provider = params.provider as string;
  if (provider !== svc.provider) throw new HttpError(404, 'unknown_provider', `Unknown provider ${provider}.`);

  if (req.method === 'GET') {
    const pending = svc.oauth.undecided(provider, query);
    const fields = Object.fromEntries(
      FORWARDED.flatMap((name) => (query.has(name) ? [[name, query.get(name) as string]] : [])),
    );
    const html = consentPage({ provider, account: pending.account, action: pathname, fields });
    return { status: 200, headers: PAGE_HEADERS, body: html };
  }
  if (req.method === 'POST') {
    const form = new URLSearchParams((await readBody(req, FORM_LIMIT)).toString('utf8'));
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
