import type { GroupSpec } from '../verb.js';
import create from './create.js';

export default { description: 'Manage API keys.', verbs: { create } } satisfies GroupSpec;
