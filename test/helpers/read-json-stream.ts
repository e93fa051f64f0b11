import { type JsonStreamOptions, JsonStreamParser } from '../../src/api/json-stream.js';

/** Reads a whole JSON value from chunks through a JsonStreamParser, as the transport does. */
export async function readJsonStream(
  chunks: AsyncIterable<Buffer>,
  options: JsonStreamOptions = {},
  afterChunk?: () => Promise<void>,
): Promise<unknown> {
  const parser = new JsonStreamParser(options);
  for await (const chunk of chunks) {
    parser.write(chunk);
    if (afterChunk) await afterChunk();
  }
  return parser.end();
}
