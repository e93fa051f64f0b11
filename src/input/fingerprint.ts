import { createHash, type Hash } from 'node:crypto';
import { CliError, ExitCode } from '../errors.js';

/**
 * Proof that a file read twice was the same both times: a hash per block taken on the first read, checked
 * on the second, which passes on no byte of a block before the whole block was checked.
 */

export const BLOCK_BYTES = 1024 * 1024;

export type Fingerprint = { readonly blocks: string[]; size: number };

export async function* fingerprint(chunks: AsyncIterable<Buffer>, into: Fingerprint): AsyncGenerator<Buffer> {
  const blocks = new BlockHasher();
  for await (const chunk of chunks) {
    blocks.add(chunk, (digest) => into.blocks.push(digest));
    into.size += chunk.length;
    yield chunk;
  }
  blocks.end((digest) => into.blocks.push(digest));
}

/** Passes the chunks on once each block of them was checked; a difference names where the file changed. */
export async function* sameAsFingerprint(
  chunks: AsyncIterable<Buffer>,
  expected: Fingerprint,
  name: string,
  /** The file's size now (stat), for the message when it turns out shorter. */
  currentSize?: () => number | undefined,
): AsyncGenerator<Buffer> {
  const blocks = new BlockHasher();
  let index = 0;
  let read = 0;
  const check = (digest: string) => {
    if (digest !== expected.blocks[index]) {
      throw changedError(name, `the bytes from offset ${index * BLOCK_BYTES} on differ from what was checked`);
    }
    index++;
  };
  // The bytes of the block being read, not passed on until it is complete and checked.
  let waiting: Buffer[] = [];
  for await (const chunk of chunks) {
    read += chunk.length;
    if (read > expected.size) throw changedError(name, `it is now longer than the ${expected.size} bytes checked`);
    let from = 0;
    const ready: Buffer[] = [];
    blocks.add(chunk, (digest, end) => {
      check(digest);
      ready.push(...waiting, chunk.subarray(from, end));
      waiting = [];
      from = end;
    });
    if (from < chunk.length) waiting.push(chunk.subarray(from));
    for (const part of ready) if (part.length > 0) yield part;
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
  blocks.end(check);
  for (const part of waiting) yield part;
}

function changedError(name: string, what: string): CliError {
  return new CliError(`${name} changed after its lines were checked: ${what}`, ExitCode.error, {
    code: 'input_changed',
  });
}

/** sha256 per BLOCK_BYTES of a byte stream fed in chunks of any size. */
class BlockHasher {
  private hash: Hash = createHash('sha256');
  private filled = 0;

  /** Feeds a chunk; `done(digest, end)` for each block completed, `end` being its end in this chunk. */
  add(chunk: Buffer, done: (digest: string, end: number) => void): void {
    let offset = 0;
    while (offset < chunk.length) {
      const take = Math.min(BLOCK_BYTES - this.filled, chunk.length - offset);
      this.hash.update(chunk.subarray(offset, offset + take));
      this.filled += take;
      offset += take;
      if (this.filled === BLOCK_BYTES) done(this.next(), offset);
    }
  }

  /** The last, partial block, if any. */
  end(done: (digest: string) => void): void {
    if (this.filled > 0) done(this.next());
  }

  private next(): string {
    const digest = this.hash.digest('hex');
    this.hash = createHash('sha256');
    this.filled = 0;
    return digest;
  }
}
