import { createDocument, editDocument, getDocument, syncDocument } from './documents.js';
import { createFace, getFace, importIntoFace } from './faces.js';
import { createApiKey, getCurrentApiKey } from './keys.js';
import { authorizeOAuth, disconnectOAuth, listOAuthConnections, oauthCallback } from './oauth.js';
import { createThread, getThread, replaceThreadMessages, syncThread } from './threads.js';
import type { HandlerMap } from './types.js';

/** The handler of every contract route; typed against the route names, so a missing one does not compile. */
export const handlers: HandlerMap = {
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
};
