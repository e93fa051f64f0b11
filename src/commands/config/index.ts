import type { GroupSpec } from '../verb.js';
import get from './get.js';
import list from './list.js';
import set from './set.js';
import unset from './unset.js';

export default {
  description:
    'Read and change settings: base_url and api_key per profile, default_profile. The file is ' +
    '$FACECTL_CONFIG_DIR/config.json when that is set, else the per-user config directory.',
  verbs: { get, set, unset, list },
} satisfies GroupSpec;
