import type { GroupSpec } from '../verb.js';
import create from './create.js';
import get from './get.js';
import replaceMessages from './replace-messages.js';
import sync from './sync.js';

export default {
  description: 'Create compile threads and replace their messages.',
  verbs: { create, 'replace-messages': replaceMessages, get, sync },
} satisfies GroupSpec;
