import { checkBaseUrl } from '../api/types.js';
import { UsageError } from '../errors.js';
import { keyPrefix } from './credentials.js';
import { checkProfileName } from './profile-store.js';

/**
 * The settings `facectl config` knows. The key is one, written only by `auth login` or `keys create --save`:
 * a value on the command line would land in shell history and process lists.
 */

export interface Setting {
  name: string;
  scope: 'profile' | 'global';
  parse(value: string): string;
  /** How the stored value is shown (the key as its prefix only). */
  show(value: unknown): string;
  refuseSet?: { message: string; hint: string };
}

const asText = (value: unknown) => (value === undefined || value === null ? '' : String(value));
const asIs = (value: string) => value;

export const SETTINGS: Record<string, Setting> = {
  base_url: {
    name: 'base_url',
    scope: 'profile',
    parse: (value) =>
      checkBaseUrl(value, 'base_url', (url) => `run \`facectl config set base_url ${url}\``).href.replace(/\/+$/, ''),
    show: asText,
  },
  api_key: {
    name: 'api_key',
    scope: 'profile',
    parse: asIs,
    show: (value) => (typeof value === 'string' && value ? `${keyPrefix(value)}…` : ''),
    refuseSet: {
      message: 'api_key cannot be set with `config set`: the key would be left in shell history and process lists',
      hint: 'run `facectl auth login` (it asks for the key, or reads it with --api-key-stdin)',
    },
  },
  api_key_base_url: {
    name: 'api_key_base_url',
    scope: 'profile',
    parse: asIs,
    show: asText,
    refuseSet: {
      message: 'api_key_base_url is stored with the key: it is the base URL the key was checked against or made at',
      hint:
        'run `facectl auth login --base-url URL` to store a key for another base URL, or ' +
        '`facectl auth login --stored-key --base-url URL` to keep the stored key for it (the same service moved)',
    },
  },
  default_profile: {
    name: 'default_profile',
    scope: 'global',
    parse: (value) => checkProfileName(value),
    show: asText,
  },
};

/** `changing`: for `config set` and `unset`, which name only the settings they take (not the key's). */
export function findSetting(name: string, changing = false): Setting {
  const setting = SETTINGS[name];
  if (!setting) {
    const known = Object.values(SETTINGS).filter((s) => !(changing && s.refuseSet));
    throw new UsageError(`unknown setting ${JSON.stringify(name)}`, {
      hint: `known settings: ${known.map((s) => s.name).join(', ')}`,
    });
  }
  return setting;
}
