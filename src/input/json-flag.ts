import type { Context } from '../context.js';
import { parseJsonObject } from './json.js';
import { fileSource, readSourceText, stdinSource } from './source.js';

/** A flag's JSON object, given inline, from a file (`@path`, as curl does) or from standard input (`-`). */
export async function readJsonObjectFlag(ctx: Context, flag: string, value: string): Promise<Record<string, unknown>> {
  if (value !== '-' && !value.startsWith('@')) return parseJsonObject(value, { source: flag });
  const source =
    value === '-'
      ? stdinSource(ctx, `pipe the JSON object in, or give ${flag} '{"key": "value"}' or ${flag} @file.json`)
      : await fileSource(value.slice(1));
  const name = source.kind === 'stdin' ? `${flag} (${source.name})` : source.name;
  return parseJsonObject(await readSourceText(source), { source: name });
}
