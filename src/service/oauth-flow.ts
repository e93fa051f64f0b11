import { hash } from 'node:crypto';
import { HttpError } from './errors.js';
import { randomBase62 } from './ids.js';

/**
 * Both ends of the local OAuth flow: the service (client) makes a single-use `state` (10 minutes) and a
 * PKCE verifier (S256); the provider issues a single-use code bound to client, redirect URI and challenge.
 * In memory only: a restart drops pending authorizations, never a finished connection.
 */

const TTL_MS = 10 * 60 * 1000;
export const CLIENT_ID = 'facectl-local';

interface PendingAuthorization {
  state: string;
  userId: string;
  account: string;
  provider: string;
  codeVerifier: string;
  codeChallenge: string;
  redirectUri: string;
  expiresMs: number;
  /** Set by the consent page's Approve or Deny; a state can be decided once. */
  decided: boolean;
}

const s256 = (verifier: string): string => hash('sha256', verifier, 'base64url');

export class OAuthFlows {
  private readonly states = new Map<string, PendingAuthorization>();
  private readonly codes = new Map<string, Pick<PendingAuthorization, 'redirectUri' | 'codeChallenge' | 'expiresMs'>>();

  constructor(private readonly clock: { now(): Date }) {}

  /** Client side: a new authorization for this user; returns the consent page URL. */
  start(baseUrl: string, provider: string, user: { id: string; account: string }): string {
    const now = this.clock.now().getTime();
    for (const [state, pending] of this.states) if (pending.expiresMs <= now) this.states.delete(state);
    for (const [code, issued] of this.codes) if (issued.expiresMs <= now) this.codes.delete(code);
    const state = randomBase62(32);
    const codeVerifier = randomBase62(64);
    const redirectUri = `${baseUrl}/v1/oauth/${encodeURIComponent(provider)}/callback`;
    const pending: PendingAuthorization = {
      state,
      userId: user.id,
      account: user.account,
      provider,
      codeVerifier,
      codeChallenge: s256(codeVerifier),
      redirectUri,
      expiresMs: this.clock.now().getTime() + TTL_MS,
      decided: false,
    };
    this.states.set(state, pending);
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: CLIENT_ID,
      redirect_uri: redirectUri,
      state,
      code_challenge: pending.codeChallenge,
      code_challenge_method: 'S256',
    });
    return `${baseUrl}/provider/${encodeURIComponent(provider)}/authorize?${query}`;
  }

  /** Provider side: the authorization the consent page is about, if it can still be decided. */
  undecided(provider: string, query: URLSearchParams): PendingAuthorization {
    const pending = this.live(query.get('state'));
    if (!pending || pending.decided || pending.provider !== provider) {
      throw new HttpError(400, 'invalid_state', 'This authorization request is unknown, expired or already decided.');
    }
    if (
      query.get('client_id') !== CLIENT_ID ||
      query.get('redirect_uri') !== pending.redirectUri ||
      query.get('code_challenge') !== pending.codeChallenge ||
      query.get('code_challenge_method') !== 'S256' ||
      (query.has('response_type') && query.get('response_type') !== 'code')
    ) {
      throw new HttpError(400, 'invalid_request', 'The authorization request does not match the registered client.');
    }
    return pending;
  }

  /** Provider side: Approve issues a code, Deny an error; both redirect to the client's callback. */
  decide(pending: PendingAuthorization, approve: boolean): string {
    pending.decided = true;
    const target = new URL(pending.redirectUri);
    if (approve) {
      const code = randomBase62(32);
      this.codes.set(code, { ...pending, expiresMs: this.clock.now().getTime() + TTL_MS });
      target.searchParams.set('code', code);
    } else {
      target.searchParams.set('error', 'access_denied');
    }
    target.searchParams.set('state', pending.state);
    return target.toString();
  }

  /** Client side: the callback's state, consumed (a second use, like an unknown or expired one, is a 400). */
  consume(provider: string, state: string | null): PendingAuthorization {
    const pending = this.live(state);
    if (state) this.states.delete(state);
    if (!pending || pending.provider !== provider) {
      throw new HttpError(400, 'invalid_state', 'This sign-in link is unknown, expired or was already used.');
    }
    return pending;
  }

  /** Provider side: the token endpoint. A code is exchanged at most once, and only with its PKCE verifier. */
  exchange(input: { code: string; codeVerifier: string; redirectUri: string }) {
    // Deleted on the first attempt, whatever its outcome: a code is never tried twice.
    const issued = this.codes.get(input.code);
    this.codes.delete(input.code);
    if (
      !issued ||
      issued.expiresMs <= this.clock.now().getTime() ||
      issued.redirectUri !== input.redirectUri ||
      issued.codeChallenge !== s256(input.codeVerifier)
    ) {
      throw new HttpError(400, 'invalid_grant', 'The authorization code is invalid, expired or was already used.');
    }
    return { access_token: randomBase62(40), token_type: 'Bearer' as const, expires_in: 3600 };
  }

  private live(state: string | null): PendingAuthorization | undefined {
    const pending = state ? this.states.get(state) : undefined;
    if (!pending || pending.expiresMs > this.clock.now().getTime()) return pending;
    this.states.delete(pending.state);
    return undefined;
  }
}
