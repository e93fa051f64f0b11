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

/** With --debug, a trace line writer for stderr: under --json a JSON line `{"debug": ...}`, as every stderr line. */
export function debugOption(ctx: Pick<Context, 'globals' | 'io'>): { debug?: (line: string) => void } {
  if (!ctx.globals.debug) return {};
  return {
    debug: (line) =>
      void ctx.io.stderr.write(ctx.globals.json ? `${safeJson({ debug: line })}\n` : `debug: ${visible(line)}\n`),
  };
}
