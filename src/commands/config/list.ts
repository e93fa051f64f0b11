import { verb } from '../kit.js';
import { activeProfile } from '../../config/credentials.js';
import { SETTINGS } from '../../config/settings.js';

export default verb({
  description:
    'List every profile and setting (keys as their prefix), and the file they are in. On a terminal, a table ' +
    '(* marks the active profile; the file on stderr); piped, a `profile<TAB>key<TAB>value` line each, the ' +
    'file and the active profile as rows config_file and active_profile with no profile, as default_profile.',
  examples: ['facectl config list', 'facectl config list --profile work', 'facectl config list --json | jq .profiles'],
  async run(ctx) {
    const store = await ctx.config();
    const active = await activeProfile(ctx);
    // --profile NAME lists that profile alone, as `config get` and `set` act on it; FACECTL_PROFILE only marks the
    // active one (a shell's export would hide the others).
    const only = ctx.globals.profile;
    // As commands decide it (and `config get default_profile` says it): unset, the profile named "default".
    const defaultProfile = store.defaultProfile || null;
    const profiles: Record<string, Record<string, string>> = {};
    // `key: null` is the row of a profile without settings (`—` on a terminal, empty fields when piped).
    const rows: { profile: string; key: string | null; value: string | null; active: boolean }[] = [];
    // Piped, the file and the active profile are rows as default_profile is, named as in --json (a table says
    // them on stderr and marks the active profile with *).
    const piped = !ctx.io.stdoutIsTTY;
    if (piped) rows.push({ profile: '', key: 'config_file', value: store.path, active: false });
    if (defaultProfile && only === undefined) {
      rows.push({ profile: '', key: 'default_profile', value: defaultProfile, active: false });
    }
    if (piped && only === undefined) rows.push({ profile: '', key: 'active_profile', value: active, active: false });
    for (const name of store.listProfiles().filter((n) => only === undefined || n === only)) {
      const shown: Record<string, string> = {};
      for (const [key, value] of Object.entries(store.getProfile(name))) {
        // Unknown keys (from a newer facectl, or edited by hand) are listed as they are, except secrets.
        const setting = SETTINGS[key];
        shown[key] = setting ? setting.show(value) : typeof value === 'string' ? value : JSON.stringify(value);
        rows.push({ profile: name, key, value: shown[key], active: name === active });
      }
      // A profile emptied of its settings is still a profile (`auth switch` takes it): one row says so.
      if (Object.keys(shown).length === 0)
        rows.push({ profile: name, key: null, value: null, active: name === active });
      profiles[name] = shown;
    }
    if (ctx.out.json) {
      const listing = { config_file: store.path, default_profile: defaultProfile, active_profile: active, profiles };
      return ctx.out.record(listing);
    }
    ctx.out.list(rows, [
      { header: 'profile', value: (r) => (r.active && ctx.io.stdoutIsTTY ? `${r.profile} *` : r.profile) },
      { header: 'key', value: (r) => r.key },
      { header: 'value', value: (r) => r.value },
    ]);
    if (!piped && ctx.io.stderrIsTTY) ctx.out.info(`(${store.path}; * = active profile)`);
  },
});
