import { createHash } from 'node:crypto';
import { CliError, ExitCode } from '../errors.js';

/**
 * Proof that a file read twice was the same both times: a hash per block taken on the first read, checked
 * on the second, which passes on no byte of a block before the whole block was checked.
 */

export const BLOCK_BYTES = 1024 * 1024;

export type Fingerprint = { readonly blocks: string[]; size: number };

export async function* fingerprint(chunks: AsyncIterable<Buffer>, into: Fingerprint): AsyncGenerator<Buffer> {
  const blocks = blockHasher((digest) => into.blocks.push(digest));
  for await (const chunk of chunks) {
    blocks.add(chunk);
    into.size += chunk.length;
    yield chunk;
  }
  blocks.end();
}

/** Passes the chunks on once each block of them was checked; a difference names where the file changed. */
export async function* sameAsFingerprint(
  chunks: AsyncIterable<Buffer>,
  expected: Fingerprint,
  name: string,
  /** The file's size now (stat), for the message when it turns out shorter. */
  currentSize?: () => number | undefined,
): AsyncGenerator<Buffer> {
  let index = 0;
  let read = 0;
  // The bytes of the block being read, not passed on until it is complete and checked; then those of the chunk.
  let waiting: Buffer[] = [];
  const ready: Buffer[] = [];
  let chunk: Buffer = Buffer.alloc(0);
  let from = 0;
  const blocks = blockHasher((digest, end) => {
    if (digest !== expected.blocks[index]) {
      throw changedError(name, `the bytes from offset ${index * BLOCK_BYTES} on differ from what was checked`);
    }
    index++;
    ready.push(...waiting, chunk.subarray(from, end));
    waiting = [];
    from = end;
  });
  for await (chunk of chunks) {
    read += chunk.length;
    if (read > expected.size) throw changedError(name, `it is now longer than the ${expected.size} bytes checked`);
    from = 0;
    blocks.add(chunk);
    if (from < chunk.length) waiting.push(chunk.subarray(from));
    for (const part of ready.splice(0)) if (part.length > 0) yield part;
  }
  if (read < expected.size) {
    // What this read got may include bytes read before the file was cut: its size is what stat says now.
    const now = currentSize?.();
    throw changedError(
      name,
      now !== undefined && now < expected.size
        ? `it is now shorter (${now} bytes) than the ${expected.size} bytes checked`
        : `it is now shorter than the ${expected.size} bytes checked (${read} bytes read)`,
    );
  }
  blocks.end();
  for (const part of ready.splice(0)) if (part.length > 0) yield part;
}

const changedError = (name: string, what: string): CliError =>
  new CliError(`${name} changed after its lines were checked: ${what}`, ExitCode.error, { code: 'input_changed' });

/** sha256 per BLOCK_BYTES of chunks of any size: `done(digest, its end in the chunk fed)`; 0 for the last, partial. */
function blockHasher(done: (digest: string, end: number) => void) {
  let hash = createHash('sha256');
  let filled = 0;
  const next = (end: number) => {
    const digest = hash.digest('hex');
    hash = createHash('sha256');
    filled = 0;
    done(digest, end);
  };
  return {
    add(chunk: Buffer): void {
      for (let offset = 0; offset < chunk.length;) {
        const take = Math.min(BLOCK_BYTES - filled, chunk.length - offset);
        hash.update(chunk.subarray(offset, (offset += take)));
        if ((filled += take) === BLOCK_BYTES) next(offset);
      }
    },
    end: () => void (filled > 0 && next(0)),
  };
}
