import { type ConfigData, ProfileStore } from '../../src/config/profile-store.js';

/** A ProfileStore over data in memory instead of the configuration file. */
export function createMemoryConfigStore(
  initial: ConfigData = {},
  path = '(memory)',
): ProfileStore & { data: ConfigData } {
  let data: ConfigData = structuredClone(initial);
  const store = new ProfileStore({
    path,
    read: () => structuredClone(data),
    update: async (change) => {
      data = structuredClone(change(structuredClone(data)));
      return structuredClone(data);
    },
  });
  Object.defineProperty(store, 'data', { get: () => structuredClone(data) });
  return store as ProfileStore & { data: ConfigData };
}
