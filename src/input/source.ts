import { closeSync, constants as fsConstants, createReadStream, open as openFd, openSync, statSync } from 'node:fs';
import { access, open, stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { Context } from '../context.js';
import { cancelledBy, UsageError } from '../errors.js';
import { decodeUtf8 } from './utf8.js';

/** A file or standard input (`-`), checked before reading: a bad path is a usage error before anything is sent. */
export interface InputSource {
  /** The path as the user wrote it, or "standard input". */
  readonly name: string;
  readonly kind: 'file' | 'stdin';
  /** Known for regular files. */
  readonly size: number | undefined;
  /** Regular files can be read twice (check, then send); standard input only once. */
  readonly reopenable: boolean;
  open(): AsyncIterable<Buffer>;
  /** A file's size as it is now, for messages about a file changed. */
  currentSize?(): number | undefined;
}

export const STDIN_NAME = 'standard input';

/** The size cap of one request body at the local service, the only limit the CLI knows of. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

export async function resolveSource(ctx: Context, path: string, stdinHint: string): Promise<InputSource> {
  return path === '-' ? stdinSource(ctx, stdinHint) : fileSource(path, ctx.signal);
}

/**
 * A file that is not regular (a FIFO, /dev/stdin, a device) is read once, as standard input is, and never
 * opened to be checked (a FIFO's writer writes to the first reader only); a FIFO's wait ends when `signal` aborts.
 */
export async function fileSource(path: string, signal?: AbortSignal): Promise<InputSource> {
  if (path === '') throw new UsageError('the file path is empty', { code: 'invalid_input' });
  const failed = (error: unknown): never => {
    throw fileError(path, error);
  };
  const info = await stat(path).catch(failed);
  if (info.isDirectory()) throw new UsageError(`cannot read ${path}: it is a directory`, { code: 'invalid_input' });
  const regular = info.isFile();
  // Opening now, not when reading, turns a permission problem into an error before anything is sent.
  await (regular ? open(path, 'r').then((file) => file.close()) : access(path, fsConstants.R_OK)).catch(failed);
  if (regular && info.size === 0) throw emptyError(path);
  return {
    name: path,
    kind: 'file',
    size: regular ? info.size : undefined,
    reopenable: regular,
    open: () => (info.isFIFO() ? readFifo(path, signal) : readFileStream(path)),
    currentSize: () => {
      try {
        return statSync(path).size;
      } catch {
        return undefined;
      }
    },
  };
}

/** Standard input, refused when it is a terminal: waiting for typed input would look like a hang. */
export function stdinSource(ctx: Context, hint: string): InputSource {
  if (ctx.io.stdinIsTTY) {
    throw new UsageError('expected input on standard input, but standard input is a terminal', {
      code: 'stdin_is_terminal',
      hint,
    });
  }
  // With --api-key-stdin its first line is the key, taken (and checked) first.
  const open = async function* () {
    if (ctx.globals.apiKeyStdin) await (await ctx.credentials()).apiKey();
    yield* untilAborted(ctx.io.stdin, ctx.signal);
  };
  return { name: STDIN_NAME, kind: 'stdin', size: undefined, reopenable: false, open };
}

async function* readFileStream(path: string): AsyncGenerator<Buffer> {
  yield* untilAborted(createReadStream(path, { highWaterMark: 256 * 1024 }), undefined, path);
}

/** A FIFO through an event-loop pipe, its open ended on abort by opening it for writing (why: docs/decisions.md). */
async function* readFifo(path: string, signal: AbortSignal | undefined): AsyncGenerator<Buffer> {
  if (signal?.aborted) throw cancelledBy(signal);
  const unblock = () => {
    try {
      closeSync(openSync(path, fsConstants.O_WRONLY | fsConstants.O_NONBLOCK));
    } catch {
      // No reader waiting (the open has returned): nothing to unblock.
    }
  };
  signal?.addEventListener('abort', unblock, { once: true });
  const fd = await new Promise<number>((resolve, reject) => {
    openFd(path, 'r', (error, opened) => (error ? reject(error) : resolve(opened)));
  })
    .catch((error: unknown) => {
      throw fileError(path, error);
    })
    .finally(() => signal?.removeEventListener('abort', unblock));
  // node:net is loaded here only: importing it costs every command's start a millisecond.
  const { Socket } = process.getBuiltinModule('node:net');
  const pipe = new Socket({ fd, readable: true, writable: false });
  try {
    yield* untilAborted(pipe, signal, path);
  } finally {
    pipe.destroy();
  }
}

/** A stream's chunks until its end, or until `signal` aborts: an idle pipe must not keep Ctrl-C waiting. */
async function* untilAborted(stream: Readable, signal?: AbortSignal, path?: string): AsyncGenerator<Buffer> {
  const stop = () => stream.destroy();
  if (signal?.aborted) throw cancelledBy(signal);
  signal?.addEventListener('abort', stop, { once: true });
  try {
    for await (const chunk of stream) yield typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
  } catch (error) {
    if (signal?.aborted) throw cancelledBy(signal);
    throw path === undefined ? error : fileError(path, error);
  } finally {
    signal?.removeEventListener('abort', stop);
  }
  if (signal?.aborted) throw cancelledBy(signal);
}

/** Reads a whole source as strict UTF-8 text, refusing empty input and input over MAX_BODY_BYTES. */
export async function readSourceText(source: InputSource): Promise<string> {
  if (source.size !== undefined && source.size > MAX_BODY_BYTES) throw tooLargeError(source.name, MAX_BODY_BYTES);
  return readChunksText(source.open(), source.name);
}

/** `documents`: the text is a document, which a too large one is told to split (see tooLargeError). */
export async function readChunksText(chunks: AsyncIterable<Buffer>, name: string, documents = false): Promise<string> {
  const parts: Buffer[] = [];
  let total = 0;
  for await (const chunk of chunks) {
    total += chunk.length;
    if (total > MAX_BODY_BYTES) throw tooLargeError(name, MAX_BODY_BYTES, documents);
    parts.push(chunk);
  }
  if (total === 0) throw emptyError(name);
  return decodeUtf8(Buffer.concat(parts, total), name);
}

export const emptyError = (name: string): UsageError => new UsageError(`${name} is empty`, { code: 'invalid_input' });

/** Nothing to send: exit 2, before any batch record is made. */
export const noDocuments = (message: string): UsageError =>
  new UsageError(message, { code: 'invalid_input', hint: 'nothing was sent' });

/** One problem as `name: problem`; more counted, the first ten listed one a line. */
export function problemsMessage(name: string, problems: readonly string[], total: number, counted: string): string {
  if (total === 1) return `${name}: ${problems[0]}`;
  const more = total > 10 ? [`... and ${total - 10} more`] : [];
  return `${name}: ${counted}:\n${[...problems.slice(0, 10), ...more].map((p) => `  ${p}`).join('\n')}`;
}

/** Input of white space alone: no document (`echo "$UNSET" |` sends a newline). */
export function blankError(name: string): UsageError {
  return new UsageError(`${name} holds only white space`, {
    code: 'invalid_input',
    hint: 'nothing was sent; to send it as it is, give it with --content',
  });
}

/**
 * Input over the request size limit. `documents`: it is a document's content, which can go as several documents;
 * a message list, a JSON value or a request body cannot, nor is there advice for a device (/dev/zero never ends).
 */
export function tooLargeError(name: string, maxBytes: number, documents = false): UsageError {
  return new UsageError(`${name} is larger than ${formatBytes(maxBytes)}, the service's request size limit`, {
    code: 'too_large',
    ...(documents ? { hint: 'split it into several documents' } : {}),
  });
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MiB`;
  if (bytes >= 1024) return `${Math.round((bytes / 1024) * 10) / 10} KiB`;
  return `${bytes} bytes`;
}

const FILE_ERRORS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'it is a directory',
  ENOTDIR: 'a part of the path is not a directory',
  ELOOP: 'too many symbolic links',
};

function fileError(path: string, error: unknown): UsageError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const why = FILE_ERRORS[code ?? ''] ?? (error as Error | undefined)?.message ?? 'unknown error';
  return new UsageError(`cannot read ${path}: ${why}`, { code: 'invalid_input', cause: error });
}
