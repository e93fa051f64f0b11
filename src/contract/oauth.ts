import * as z from 'zod/mini';
import { dateTime, detailMessage, noParams, pathSegment } from './common.js';
import { defineRoute } from './route.js';

/**
 * An entry of GET /v1/oauth. The seed's table has no Required column, so no field is required here; the
 * local service sends provider and connected always, connected_at while connected.
 */
export const oauthConnection = z.looseObject({
  provider: z.optional(z.string()),
  connected: z.optional(z.boolean()),
  // Not nullable in the seed: where there is none (not connected), the local service leaves it out.
  connected_at: z.optional(dateTime),
});
export type OAuthConnection = z.output<typeof oauthConnection>;

export const providerParams = z.strictObject({ provider: pathSegment });

export const listOAuthConnections = defineRoute({
  name: 'listOAuthConnections',
  method: 'GET',
  path: '/v1/oauth',
  summary: 'List OAuth connections (Connect plan only).',
  params: noParams,
  response: z.array(oauthConnection),
  scope: 'oauth:read',
});

export const authorizeOAuth = defineRoute({
  name: 'authorizeOAuth',
  method: 'GET',
  path: '/v1/oauth/{provider}/authorize',
  summary: 'Get the URL to open in a browser to connect the provider (Connect plan only).',
  params: providerParams,
  response: z.looseObject({ authorize_url: z.string() }),
  scope: 'oauth:write',
});

export const disconnectOAuth = defineRoute({
  name: 'disconnectOAuth',
  method: 'DELETE',
  path: '/v1/oauth/{provider}',
  summary: 'Disconnect the provider (Connect plan only).',
  params: providerParams,
  response: detailMessage,
  scope: 'oauth:write',
});

/** Extension: where the browser lands after consent, authenticated by its single-use `state`, not a key. */
export const oauthCallback = defineRoute({
  name: 'oauthCallback',
  method: 'GET',
  path: '/v1/oauth/{provider}/callback',
  summary: 'OAuth redirect target: checks state, exchanges the code, stores the connection (HTML).',
  params: providerParams,
  response: z.string(),
  extension: true,
  responseKind: 'html',
  scope: null,
});
