import type { GroupSpec } from '../verb.js';
import get from './get.js';
import submit from './submit.js';
import sync from './sync.js';

export default {
  description: 'Submit, read and sync compile documents.',
  verbs: { submit, get, sync },
} satisfies GroupSpec;
