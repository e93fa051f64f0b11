import * as z from 'zod';
import { LargeStrings } from '../../api/large-strings.js';
import type { Context } from '../../context.js';
import { createDocument, type Document } from '../../contract/documents.js';
import { UsageError } from '../../errors.js';
import {
  type DocumentBody,
  type DocumentDefaults,
  type DocumentFormat,
  detectDocumentFormat,
  readJsonDocument,
  textDocument,
} from '../../input/documents.js';
import { aliasOption, checkAlias, choiceOption, integerOption, perspectiveOption } from '../../input/options.js';
import { MAX_BODY_BYTES, resolveSource, tooLargeError } from '../../input/source.js';
import { checkUtf8, spoolText, streamTextBody } from '../../input/text-body.js';
import { parseOptions, requireValue } from '../kit.js';
import type { JournalMode } from './batch-journal.js';
import { DOCUMENT_FIELDS, notePreview } from './fields.js';
import { submitBatch } from './submit-batch.js';

/**
 * `facectl docs submit`: one document from --content, a file or standard input, or a batch of them from
 * NDJSON. The kind of a file or of standard input is detected (see detectDocumentFormat) unless
 * --format names it.
 */

export interface SubmitOptions extends DocumentDefaults {
  content?: string | undefined;
  /** A path, or `-` for standard input (from `--file -` or the `-` argument). */
  file?: string | undefined;
  format?: DocumentFormat | undefined;
  concurrency: number;
  continueOnError: boolean;
  /** For a batch: `resume` sends only what an earlier run left, `restart` every line again. */
  journal: JournalMode;
}

export const STDIN_HINT =
  'pipe the document in (e.g. `facectl docs submit --alias ada --label notes - < notes.txt`), or use --file PATH or --content TEXT';

const optionsSchema = z.object({
  alias: aliasOption.optional(),
  label: z
    .string()
    .min(1, { error: 'must not be empty' })
    .max(500, { error: 'must be at most 500 characters' })
    .optional(),
  perspective: perspectiveOption.optional(),
  content: z.string().optional(),
  file: z.string().optional(),
  format: choiceOption(['text', 'json', 'ndjson']).optional(),
  concurrency: integerOption(1, 64, 'requests').default(4),
  continueOnError: z.boolean().default(false),
  resume: z.boolean().default(false),
  restart: z.boolean().default(false),
});

export function parseSubmitOptions(raw: Record<string, unknown>, input?: string): SubmitOptions {
  const options = parseOptions(optionsSchema, { ...raw, concurrency: raw.concurrency ?? '4' });
  if (input !== undefined && input !== '-') {
    throw new UsageError(`unexpected argument ${JSON.stringify(input)}`, {
      hint: `to submit a file, use --file ${input}; for text, --content "..."`,
    });
  }
  const given = [options.content !== undefined, options.file !== undefined, input === '-'].filter(Boolean).length;
  if (given > 1) throw new UsageError('give only one of --content, --file and - (standard input)');
  if (given === 0) {
    throw new UsageError('no document given', {
      hint: 'give --content TEXT, --file PATH, or - to read standard input',
    });
  }
  if (options.content === '') throw new UsageError('--content: must not be empty');
  if (options.content !== undefined && options.format !== undefined && options.format !== 'text') {
    throw new UsageError(`--format ${options.format} needs --file PATH or - (--content is always text)`);
  }
  if (options.resume && options.restart) throw new UsageError('give only one of --resume and --restart');
  const batchOnly = options.resume ? '--resume' : options.restart ? '--restart' : undefined;
  if (batchOnly !== undefined && options.content !== undefined) {
    throw new UsageError(`${batchOnly} applies to a batch (NDJSON from --file PATH or -), not to --content`);
  }
  if (batchOnly !== undefined && options.format !== undefined && options.format !== 'ndjson') {
    throw new UsageError(`${batchOnly} applies to a batch (NDJSON), not to --format ${options.format}`);
  }
  const { resume, restart, ...rest } = options;
  const journal: JournalMode = resume ? 'resume' : restart ? 'restart' : 'new';
  return { ...rest, journal, file: input === '-' ? '-' : options.file };
}

export async function submitAction(ctx: Context, raw: Record<string, unknown>, input?: string): Promise<void> {
  await runSubmit(ctx, parseSubmitOptions(raw, input));
}

export async function runSubmit(ctx: Context, opts: SubmitOptions): Promise<void> {
  if (opts.content !== undefined) {
    await submitOne(ctx, textBody(opts.content, await textFlags(ctx, opts)));
    return;
  }
  const source = await resolveSource(ctx, opts.file as string, STDIN_HINT);
  const detected = opts.format
    ? { format: opts.format, chunks: source.open() }
    : await detectDocumentFormat(source.open(), source.name);
  if (opts.journal !== 'new' && detected.format !== 'ndjson') {
    throw new UsageError(
      `--${opts.journal} applies to a batch (NDJSON), but ${source.name} was read as ${detected.format === 'json' ? 'one JSON document' : 'text'}`,
      { hint: 'pass --format ndjson if it is a batch' },
    );
  }
  switch (detected.format) {
    case 'text': {
      // The flags first: a missing --alias is reported before a large input is read.
      const flags = await textFlags(ctx, opts);
      // The flags checked as a document with a stand-in content: the real one is streamed, not held.
      const { content: _standIn, ...head } = textBody('-', flags);
      if (source.size !== undefined && source.size > MAX_BODY_BYTES) throw tooLargeError(source.name, MAX_BODY_BYTES);
      if (source.reopenable) {
        // A file is checked whole first (nothing is sent if it is not UTF-8), then read again to send;
        // the body is a function so that a retry reads it once more.
        await checkUtf8(detected.chunks, source.name);
        await submitOne(ctx, () => streamTextBody(head, source.open(), source.name, MAX_BODY_BYTES));
      } else {
        // Standard input is read to its end and checked before the request: bad bytes send nothing,
        // and the kept copy (a temporary file beyond a few MiB) lets a retry send it again.
        const spooled = await spoolText(detected.chunks, source.name, MAX_BODY_BYTES);
        try {
          await submitOne(ctx, () => streamTextBody(head, spooled.open(), source.name, MAX_BODY_BYTES));
        } finally {
          await spooled.dispose();
        }
      }
      return;
    }
    case 'json':
      await submitOne(ctx, await readJsonDocument(detected.chunks, source.name, opts));
      return;
    case 'ndjson':
      await submitBatch(ctx, { source, chunks: detected.chunks, defaults: opts, ...opts });
      return;
  }
}

/** Plain text needs --alias and --label; on a terminal they are asked for. */
async function textFlags(ctx: Context, opts: SubmitOptions): Promise<DocumentDefaults> {
  const alias = await requireValue(ctx, {
    flag: '--alias',
    value: opts.alias,
    message: 'Alias of the face the document belongs to',
    validate: checkAlias,
  });
  const label = await requireValue(ctx, { flag: '--label', value: opts.label, message: 'Label of the document' });
  return { alias, label, perspective: opts.perspective };
}

function textBody(content: string, flags: DocumentDefaults): DocumentBody {
  const result = textDocument(content, flags);
  if (typeof result === 'string') throw new UsageError(result);
  return result;
}

/** A document body, or its JSON bytes as a stream (see streamTextBody). */
type SubmitBody = DocumentBody | AsyncIterable<Uint8Array> | (() => AsyncIterable<Uint8Array>);

export async function submitOne(ctx: Context, body: SubmitBody): Promise<Document> {
  const api = await ctx.api();
  if (!(typeof body === 'function' || Symbol.asyncIterator in body)) {
    const document = await api.call(createDocument, { body }, { signal: ctx.signal });
    ctx.out.record(document, DOCUMENT_FIELDS);
    ctx.out.success(`Submitted ${document.document_id} to ${document.alias}`);
    notePreview(ctx, document);
    return document;
  }
  // The service echoes the whole document: a streamed one's answer is read without holding its content,
  // which goes to a temporary file only when --json prints it (see src/api/large-strings.ts).
  const large = new LargeStrings({ fields: ['content'], keep: ctx.out.json ? 'spool' : 'none' });
  try {
    const document = await api.call(createDocument, {}, { signal: ctx.signal, rawBody: body, largeStrings: large });
    if (ctx.out.json) await large.writeJson(ctx.io.stdout, document);
    else ctx.out.record(document, DOCUMENT_FIELDS);
    ctx.out.success(`Submitted ${document.document_id} to ${document.alias}`);
    notePreview(ctx, document);
    return document;
  } finally {
    await large.dispose();
  }
}
