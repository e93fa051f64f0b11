import { hash } from 'node:crypto';
import type { AuthInfo } from '../auth.js';
import { forbidden, HttpError, notFound } from '../errors.js';
import { resultPage } from '../oauth-pages.js';
import { PLANS } from '../plans.js';
import type { Handler, ServiceCore } from '../service-core.js';

/** /v1/oauth: the Connect plan first (403 plan_required; the callback has no key), then a known provider (404). */
function requireConnect(svc: ServiceCore, auth: AuthInfo | null, provider = svc.provider): void {
  if (auth && !PLANS[auth.user.plan].oauth) {
    throw forbidden(
      'plan_required',
      `OAuth connections are only for the Connect plan; this user is on the ${auth.user.plan} plan`,
    );
  }
  if (provider !== svc.provider) {
    throw notFound('unknown_provider', `unknown OAuth provider ${provider}; this service offers ${svc.provider}`);
  }
}

const connectionId = (userId: string, provider: string) => `${userId}:${provider}`;

export const listOAuthConnections: Handler<'listOAuthConnections'> = ({ auth, svc }) => {
  requireConnect(svc, auth);
  const connection = svc.store.get('connections', connectionId(auth.user.id, svc.provider));
  return {
    status: 200,
    // The seed types connected_at as a date-time (not nullable): a provider not connected has none.
    body: [
      connection === undefined
        ? { provider: svc.provider, connected: false }
        : { provider: svc.provider, connected: true, connected_at: connection.connected_at },
    ],
  };
};

/** POST /v1/oauth/{provider}/authorize: the consent page's URL; `serve --consent approve|deny` decides it at once. */
export const authorizeOAuth: Handler<'authorizeOAuth'> = ({ params, auth, svc }) => {
  requireConnect(svc, auth, params.provider);
  const url = svc.oauth.start(svc.baseUrl, params.provider, { id: auth.user.id, account: auth.user.account });
  if (svc.consent !== 'page') {
    const pending = svc.oauth.undecided(params.provider, new URL(url).searchParams);
    const callback = new URL(svc.oauth.decide(pending, svc.consent === 'approve'));
    finishAuthorization(svc, params.provider, callback.searchParams);
  }
  return { status: 200, body: { authorize_url: url } };
};

export const disconnectOAuth: Handler<'disconnectOAuth'> = ({ params, auth, svc }) => {
  requireConnect(svc, auth, params.provider);
  const id = connectionId(auth.user.id, params.provider);
  if (!svc.store.get('connections', id)) throw notFound('not_connected', `${params.provider} is not connected`);
  svc.store.del('connections', id);
  return { status: 200, body: { detail: `Disconnected from ${params.provider}` } };
};

/** GET /v1/oauth/{provider}/callback (HTML): the browser lands here from the consent page. */
export const oauthCallback: Handler<'oauthCallback'> = ({ params, query, svc }) => {
  requireConnect(svc, null, params.provider);
  return { status: 200, body: finishAuthorization(svc, params.provider, query) };
};

/** The callback's work: the state consumed, the code exchanged with the PKCE verifier, the connection stored. */
function finishAuthorization(svc: ServiceCore, provider: string, query: URLSearchParams): string {
  const pending = svc.oauth.consume(provider, query.get('state'));
  const error = query.get('error');
  if (error !== null) {
    const why = error === 'access_denied' ? 'access was denied on the consent page' : `the provider said ${error}`;
    // The client cannot learn of this (GET /v1/oauth only): the page says what to do in the terminal.
    return resultPage(
      `Not connected to ${provider}`,
      `Nothing was connected: ${why}. facectl oauth connect, in your terminal, keeps waiting until its timeout ` +
        `(--timeout): press Ctrl-C there to stop it, or run facectl oauth connect ${provider} again to retry.`,
    );
  }
  const code = query.get('code');
  if (!code) throw new HttpError(400, 'invalid_request', 'The callback carries no authorization code.');
  const token = svc.oauth.exchange({ ...pending, code });
  svc.stats.tokenExchanges++;
  const user = svc.store.get('users', pending.userId);
  if (!user || !PLANS[user.plan].oauth)
    throw forbidden('plan_required', 'OAuth connections are only for the Connect plan.');
  svc.store.put('connections', {
    id: connectionId(user.id, provider),
    user_id: user.id,
    provider,
    connected_at: svc.clock.now().toISOString(),
    token_sha256: hash('sha256', token.access_token),
  });
  return resultPage(
    `Connected to ${provider}`,
    `Your ${provider} account ${user.account} is connected. You can close this window.`,
  );
}
