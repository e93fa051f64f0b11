import type { Readable } from 'node:stream';
import { UsageError } from '../errors.js';

/** The first line, the rest put back: `--api-key-stdin` shares standard input with a document after the key. */
export function readFirstLine(stream: Readable, maxBytes = 8192): Promise<string> {
  if (stream.readableEnded) return Promise.resolve('');
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    const finish = (result: string | Error, rest?: Buffer) => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', finish);
      stream.pause();
      if (rest && rest.length > 0) stream.unshift(rest);
      if (typeof result === 'string') resolve(result);
      else reject(result);
    };
    const onData = (chunk: Buffer | string) => {
      buffered = Buffer.concat([buffered, typeof chunk === 'string' ? Buffer.from(chunk) : chunk]);
      const newline = buffered.indexOf(0x0a);
      if (newline >= 0)
        finish(buffered.subarray(0, newline).toString('utf8').replace(/\r$/, ''), buffered.subarray(newline + 1));
      else if (buffered.length > maxBytes) {
        finish(
          new UsageError(`the first line of standard input is longer than ${maxBytes} bytes; expected an API key`),
        );
      }
    };
    const onEnd = () => finish(buffered.toString('utf8'));
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', finish);
    stream.resume();
  });
}
