import { createRequire } from 'node:module';

/**
 * Where the o200k_base encoding's CommonJS module is, for tokens.ts to require it (main thread and
 * workers alike). Run from source, that is gpt-tokenizer's own file; the build (scripts/build.mjs,
 * tokenizerPath) replaces this module with one that finds dist/tokenizer.cjs, the encoding bundled.
 */
export function tokenizerPath(): string {
  return createRequire(import.meta.url).resolve('gpt-tokenizer/cjs/encoding/o200k_base');
}
