import type { Context } from '../context.js';
import { safeJson, visible } from '../io/output.js';
import type { ApiClient } from './types.js';
import { type ApiClientOptions, createApiClient } from './client.js';

/** A client from a context's pieces for a given base URL and key (ctx.api(), and `auth login` checking a key). */
export function clientForContext(
  ctx: Pick<Context, 'globals' | 'env' | 'signal' | 'clock' | 'io'>,
  target: Pick<ApiClientOptions, 'baseUrl' | 'apiKey' | 'noKeyMessage'>,
  extra: Partial<ApiClientOptions> = {},
): ApiClient {
  return createApiClient({
    ...target,
    insecureHttp: ctx.globals.insecureHttp,
    env: ctx.env,
    signal: ctx.signal,
    sleep: ctx.clock.sleep,
    ...debugOption(ctx),
    ...extra,
  });
}

/** With --debug, what writes a trace line to stderr (`{ debug }`); without it, nothing. */
export function debugOption(ctx: Pick<Context, 'globals' | 'io'>): { debug?: (line: string) => void } {
  return ctx.globals.debug ? { debug: (line: string) => void ctx.io.stderr.write(debugLine(ctx, line)) } : {};
}

/** A --debug trace line: under --json a JSON line `{"debug": ...}` like every stderr line, else `debug: ...`. */
function debugLine(ctx: Pick<Context, 'globals'>, line: string): string {
  return ctx.globals.json ? `${safeJson({ debug: line })}\n` : `debug: ${visible(line)}\n`;
}
