import type { GroupSpec } from '../verb.js';
import connect from './connect.js';
import disconnect from './disconnect.js';
import list from './list.js';

export default {
  summary: 'Connect an external provider account (Connect plan)',
  description:
    'Connect an external provider account so compile interviews are billed to it.\n\n' +
    'OAuth connections are only for the Connect plan: keys of Free, Standard and Pro users are refused ' +
    '(403 plan_required, exit 6).',
  verbs: { list, connect, disconnect },
} satisfies GroupSpec;
