import type { GroupSpec } from '../verb.js';
import create from './create.js';
import get from './get.js';

export default { description: 'Create and read faces.', verbs: { create, get } } satisfies GroupSpec;
