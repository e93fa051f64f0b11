import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BLOCK_BYTES, type Fingerprint, fingerprint, sameAsFingerprint } from '../../src/input/fingerprint.js';

async function* chunked(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

async function collect(chunks: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  return Buffer.concat(parts);
}

describe('file fingerprint (the proof a batch file read twice did not change)', () => {
  const original = randomBytes(3 * BLOCK_BYTES + 12345);

  it('the same bytes, in chunks of other sizes, pass through whole', async () => {
    const print: Fingerprint = { blocks: [], size: 0 };
    expect((await collect(fingerprint(chunked(original, 65536), print))).equals(original)).toBe(true);
    expect(print.blocks).toHaveLength(4);
    expect(print.size).toBe(original.length);
    const again = await collect(sameAsFingerprint(chunked(original, 7777), print, 'big.ndjson'));
    expect(again.equals(original)).toBe(true);
  });

  it('a changed byte, a shorter or a longer file is an error naming the file; no byte of a changed block passes', async () => {
    const print: Fingerprint = { blocks: [], size: 0 };
    await collect(fingerprint(chunked(original, 65536), print));
    const edited = Buffer.from(original);
    edited[2 * BLOCK_BYTES + 5] = (edited[2 * BLOCK_BYTES + 5] as number) ^ 1;
    const cases: [Buffer, RegExp][] = [
      [
        edited,
        new RegExp(
          `^big\\.ndjson changed after its lines were checked: the bytes from offset ${2 * BLOCK_BYTES} on differ`,
        ),
      ],
      [original.subarray(0, original.length - 1), /^big\.ndjson changed .*: it is now shorter/],
      [Buffer.concat([original, Buffer.from('{}\n')]), /^big\.ndjson changed .*: it is now longer/],
    ];
    for (const [bytes, message] of cases) {
      const passed: Buffer[] = [];
      const error = await (async () => {
        for await (const chunk of sameAsFingerprint(chunked(bytes, 100_000), print, 'big.ndjson')) passed.push(chunk);
      })().then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(error?.message).toMatch(message);
      const through = Buffer.concat(passed);
      // What passed is a prefix of the original, made of whole checked blocks.
      expect(original.subarray(0, through.length).equals(through)).toBe(true);
      expect(through.length % BLOCK_BYTES).toBe(0);
    }
  });

  it('cut while read: the message gives the size the file has now, not the bytes this read got before the cut', async () => {
    const print: Fingerprint = { blocks: [], size: 0 };
    await collect(fingerprint(chunked(original, 65536), print));
    // Two and a half blocks read (some of them before the cut), then the end; the file now holds 1.5 blocks.
    const read = original.subarray(0, 2 * BLOCK_BYTES + BLOCK_BYTES / 2);
    const cutTo = BLOCK_BYTES + BLOCK_BYTES / 2;
    const stopped = (currentSize?: () => number | undefined) =>
      collect(sameAsFingerprint(chunked(read, 100_000), print, 'big.ndjson', currentSize)).then(
        () => '',
        (e: unknown) => (e as Error).message,
      );
    expect(await stopped(() => cutTo)).toBe(
      `big.ndjson changed after its lines were checked: it is now shorter (${cutTo} bytes) than the ${original.length} bytes checked`,
    );
    // Its size unknown (the file gone): the bytes read are said as such.
    expect(await stopped(() => undefined)).toBe(
      `big.ndjson changed after its lines were checked: it is now shorter than the ${original.length} bytes checked (${read.length} bytes read)`,
    );
  });
});
