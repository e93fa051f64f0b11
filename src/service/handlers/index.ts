import * as documents from './documents.js';
import * as faces from './faces.js';
import * as keys from './keys.js';
import * as oauth from './oauth.js';
import * as threads from './threads.js';
import type { HandlerMap } from './types.js';

/**
 * The handler of every contract route: each module exports its handlers under their route names
 * (contract/index.ts lists them), and the map is typed against those names, so a missing one does not
 * compile. (documents.ts also exports insertDocument, which faces.ts's import shares; it is no route.)
 */
export const handlers: HandlerMap = { ...oauth, ...keys, ...faces, ...documents, ...threads };
