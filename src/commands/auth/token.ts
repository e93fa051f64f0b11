import { verb } from '../kit.js';
import { KEY_SOURCE_LABELS } from '../../config/credentials.js';
import { AuthError } from '../../errors.js';

export default verb({
  description:
    'Print the API key facectl would send to the current base URL, for other tools. A stored key is ' +
    'printed only for the base URL it was saved with. Warns first when standard output is a terminal.',
  examples: [
    'curl -H "Authorization: Bearer $(facectl auth token)" http://127.0.0.1:8787/v1/auth/api-keys/current',
    'facectl auth token --profile work | other-tool --api-key-stdin',
  ],
  async run(ctx) {
    const creds = await ctx.credentials();
    const found = await creds.apiKey();
    if (!found) throw new AuthError(`not logged in: ${creds.describe()}`);
    // On a terminal the key is then on the screen (and perhaps in a recording or scroll-back).
    if (ctx.io.stdoutIsTTY) {
      ctx.out.warn(
        `this prints the full API key for ${creds.baseUrl} (from ${KEY_SOURCE_LABELS[found.source]}); ` +
          'anyone who sees it can use it. Pipe it into the tool that needs it instead.',
      );
    }
    if (ctx.out.json) {
      ctx.out.record({ key: found.key, base_url: creds.baseUrl, profile: creds.profile, key_source: found.source });
    } else ctx.out.text(`${found.key}\n`);
  },
});
