import { syncVerb } from '../docs/wait-ready.js';
import { THREAD_FIELDS } from './get.js';

export default syncVerb('thread', THREAD_FIELDS, async () => {
  const { getThread, syncThread } = await import('../../contract/threads.js');
  return { sync: syncThread, get: getThread };
});
