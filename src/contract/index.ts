/**
 * The interface contract: one definition per endpoint of the Face Compilation Service, shared by the
 * CLI's client, the local service and the OpenAPI document. Published as `facectl/contract`.
 */
import { createDocument, editDocument, getDocument, importIntoFace, syncDocument } from './documents.js';
import { createFace, getFace } from './faces.js';
import { createApiKey, getCurrentApiKey } from './keys.js';
import { authorizeOAuth, disconnectOAuth, listOAuthConnections, oauthCallback } from './oauth.js';
import { createThread, getThread, replaceThreadMessages, syncThread } from './threads.js';

export * from './common.js';
export * from './documents.js';
export * from './faces.js';
export * from './keys.js';
export * from './oauth.js';
export * from './route.js';
export * from './threads.js';

/** Every route, by name. The local service's handler map is typed against these names. */
export const routes = {
  listOAuthConnections,
  authorizeOAuth,
  disconnectOAuth,
  oauthCallback,
  createApiKey,
  getCurrentApiKey,
  createFace,
  getFace,
  importIntoFace,
  createDocument,
  getDocument,
  editDocument,
  syncDocument,
  createThread,
  getThread,
  replaceThreadMessages,
  syncThread,
} as const;

export type Routes = typeof routes;
export type RouteName = keyof Routes;
