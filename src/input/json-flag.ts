import type { Context } from '../context.js';
import { parseJsonObject } from './json.js';
import { fileSource, readSourceText, stdinSource } from './source.js';

/**
 * A flag whose value is a JSON object given inline, from a file (`@path`, as curl does) or from
 * standard input (`-`). Errors name the flag for inline JSON and the path for a file.
 */
export async function readJsonObjectFlag(ctx: Context, flag: string, value: string): Promise<Record<string, unknown>> {
  if (value === '-') {
    const source = stdinSource(
      ctx,
      `pipe the JSON object in, or give ${flag} '{"key": "value"}' or ${flag} @file.json`,
    );
    return parseJsonObject(await readSourceText(source), { source: `${flag} (${source.name})` });
  }
  if (value.startsWith('@')) {
    const source = await fileSource(value.slice(1));
    return parseJsonObject(await readSourceText(source), { source: source.name });
  }
  return parseJsonObject(value, { source: flag });
}
