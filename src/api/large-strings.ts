import { type FileHandle, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JsonStreamOptions } from './json-stream.js';

/** `tmpDir`: where the files' private directory is made (default: the system's). */
type Options = { fields: readonly string[]; keep: 'none' | 'spool'; inlineBytes?: number; tmpDir?: string };

/**
 * The large strings of an answer: dropped (`keep: 'none'`), or each longer than `inlineBytes` spooled
 * escaped to a 0600 temporary file, so that writeJson prints exactly what `JSON.stringify` would.
 */
export class LargeStrings {
  private readonly fields: ReadonlySet<string>;
  private readonly markerPrefix = `\u0000facectl:large:${process.getBuiltinModule('node:crypto').randomBytes(9).toString('base64url')}:`;
  private count = 0;
  /** Marker string -> the file holding the escaped text (spool; dropped strings are not kept). */
  private readonly kept = new Map<string, string>();
  private dir: string | undefined;

  constructor(private readonly options: Options) {
    this.fields = new Set(options.fields);
  }

  has(value: unknown): boolean {
    return typeof value === 'string' && value.startsWith(this.markerPrefix);
  }

  /** One reading of an answer (a retry reads afresh): flush() after each chunk, then commit() or abort(). */
  async begin() {
    const { keep, inlineBytes = 64 * 1024, tmpDir } = this.options;
    if (keep === 'spool') this.dir ??= await mkdtemp(join(tmpDir ?? tmpdir(), 'facectl-response-'));
    const dir = this.dir;
    const started: { marker: string; writer: SpoolWriter | undefined }[] = [];
    const options: JsonStreamOptions = {
      largeFields: this.fields,
      inlineBytes: keep === 'none' ? 0 : inlineBytes,
      open: () => {
        const marker = `${this.markerPrefix}${this.count}\u0000`;
        const writer = dir === undefined ? undefined : new SpoolWriter(join(dir, `${this.count}.json-text`));
        this.count++;
        started.push({ marker, writer });
        return { write: (piece) => writer?.write(piece), end: () => marker };
      },
    };
    return {
      options,
      flush: async () => {
        for (const { writer } of started) await writer?.flush();
      },
      commit: async () => {
        // Dropped strings leave nothing to remember: one set can serve a whole batch of answers.
        if (dir === undefined) return;
        for (const { writer } of started) await writer?.close();
        for (const { marker, writer } of started) if (writer) this.kept.set(marker, writer.path);
      },
      abort: async () => {
        for (const { writer } of started) {
          await writer?.close().catch(() => undefined);
          if (writer) await rm(writer.path, { force: true });
        }
      },
    };
  }

  /** Writes `${JSON.stringify(value, null, indent)}\n`, each marker replaced by its string read back from its file. */
  async writeJson(stream: NodeJS.WritableStream, value: unknown, indent = 2): Promise<void> {
    const text = `${JSON.stringify(value, null, indent)}\n`;
    const prefix = JSON.stringify(this.markerPrefix).slice(1, -1);
    if (this.options.keep === 'none' && text.includes(prefix)) {
      throw new Error('a large string that was dropped cannot be printed');
    }
    let from = 0;
    for (const found of text.matchAll(new RegExp(`"${prefix.replaceAll('\\', '\\\\')}\\d+\\\\u0000"`, 'g'))) {
      const path = this.kept.get(JSON.parse(found[0]) as string);
      if (path === undefined) continue;
      // Up to and with the opening quote, then the text, then on from the closing quote.
      await write(stream, text.slice(from, found.index + 1));
      await copyFile(path, stream);
      from = found.index + found[0].length - 1;
    }
    await write(stream, from === 0 ? text : text.slice(from));
  }

  async dispose(): Promise<void> {
    this.kept.clear();
    const dir = this.dir;
    this.dir = undefined;
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  }
}

/**
 * One large string written to a file as it arrives, escaped as inside a JSON string, through one reused
 * buffer: a fresh one per piece piles up outside the heap until a full collection (tens of MiB).
 */
class SpoolWriter {
  private pending: string[] = [];
  private file: Promise<FileHandle> | undefined;
  private buffer: Buffer | undefined;

  constructor(readonly path: string) {}

  write(piece: string): void {
    const json = JSON.stringify(piece);
    this.pending.push(json.slice(1, json.length - 1));
  }

  async flush(): Promise<void> {
    this.file ??= open(this.path, 'wx', 0o600);
    const file = await this.file;
    if (this.pending.length === 0) return;
    const parts = this.pending;
    this.pending = [];
    const buffer = (this.buffer ??= Buffer.allocUnsafe(COPY_BYTES));
    for (let rest of parts) {
      while (rest.length > 0) {
        const { read, written } = encoder.encodeInto(rest, buffer);
        await file.writeFile(buffer.subarray(0, written));
        rest = rest.slice(read);
      }
    }
  }

  async close(): Promise<void> {
    await this.flush();
    await (await this.file)?.close();
  }
}

const COPY_BYTES = 256 * 1024;
const encoder = new TextEncoder();

/** Writes and waits until the stream is done with the bytes (so their buffer may be reused). */
function write(stream: NodeJS.WritableStream, bytes: string | Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.write(bytes, (error) => (error ? reject(error) : resolve()));
  });
}

/**
 * A stream on a file descriptor (stdout) has handed the bytes to the system when it calls back, so one
 * buffer serves every read; any other stream may keep the buffer it was given, so it gets copies.
 */
async function copyFile(path: string, stream: NodeJS.WritableStream): Promise<void> {
  const reuse = typeof (stream as { fd?: unknown }).fd === 'number';
  const file = await open(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(COPY_BYTES);
    for (;;) {
      const { bytesRead } = await file.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) return;
      const bytes = buffer.subarray(0, bytesRead);
      await write(stream, reuse ? bytes : Buffer.from(bytes));
    }
  } finally {
    await file.close();
  }
}
