import * as z from 'zod';
import { dateTime, detailMessage, pathSegment } from './common.js';
import { defineRoute } from './route.js';

export const oauthConnection = z.looseObject({
  provider: z.string(),
  connected: z.boolean(),
  // The spec types connected_at as a date-time but does not say it is always present; a provider
  // that was never connected has none, so the local service sends null.
  connected_at: dateTime.nullish(),
});
export type OAuthConnection = z.output<typeof oauthConnection>;

export const providerParams = z.strictObject({ provider: pathSegment });

export const listOAuthConnections = defineRoute({
  name: 'listOAuthConnections',
  method: 'GET',
  path: '/v1/oauth',
  summary: 'List OAuth connections (Connect plan only).',
  params: z.object({}),
  body: undefined,
  response: z.array(oauthConnection),
  scope: 'oauth:read',
});

export const authorizeOAuth = defineRoute({
  name: 'authorizeOAuth',
  method: 'GET',
  path: '/v1/oauth/{provider}/authorize',
  summary: 'Get the URL to open in a browser to connect the provider (Connect plan only).',
  params: providerParams,
  body: undefined,
  response: z.looseObject({ authorize_url: z.string() }),
  scope: 'oauth:write',
});

export const disconnectOAuth = defineRoute({
  name: 'disconnectOAuth',
  method: 'DELETE',
  path: '/v1/oauth/{provider}',
  summary: 'Disconnect the provider (Connect plan only).',
  params: providerParams,
  body: undefined,
  response: detailMessage,
  scope: 'oauth:write',
});

/**
 * Extension: where the browser lands after the consent page. It authenticates by the single-use
 * `state`, not by a key, and answers an HTML page.
 */
export const oauthCallback = defineRoute({
  name: 'oauthCallback',
  method: 'GET',
  path: '/v1/oauth/{provider}/callback',
  summary: 'OAuth redirect target: checks state, exchanges the code, stores the connection (HTML).',
  params: providerParams,
  body: undefined,
  response: z.string(),
  extension: true,
  responseKind: 'html',
  scope: null,
});
