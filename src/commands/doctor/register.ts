import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { addExamples, lazyAction } from '../kit.js';

/** `facectl doctor`: declared with commander only; the checks load when the command runs. */
export function registerDoctor(program: Command, ctx: Context): void {
  const doctor = program
    .command('doctor')
    .description(
      'Check the setup, one line per check with its status (ok, warn, fail) and a fix: the configuration\n' +
        'file and its modes, which key is used and whether the service accepts it (expiry, scopes, budget,\n' +
        'plan), the base URL (reachability, TLS), proxy variables and clock skew. Exits 1 when a check fails.\n' +
        'Asks the service about the key with an endpoint the published interface does not show\n' +
        '(GET /v1/auth/api-keys/current).',
    )
    .action(lazyAction(ctx, async () => (await import('./run.js')).doctorAction));
  addExamples(doctor, [
    'facectl doctor',
    'facectl doctor --json | jq \'.checks[] | select(.status != "ok")\'',
    'FACECTL_API_KEY=fcs_... facectl doctor --base-url https://api.example.com',
  ]);
}
