import { Writable } from 'node:stream';
import * as z from 'zod';
import { LargeStrings } from '../../api/large-strings.js';
import { capYoungGeneration } from '../../api/young-generation.js';
import type { Context } from '../../context.js';
import { createDocument, type Document } from '../../contract/documents.js';
import { UsageError } from '../../errors.js';
import type { DocumentDefaults } from '../../input/documents.js';
import { type PreparedDocument, preparedText, readDocumentInput } from '../../input/document-input.js';
import { aliasOption, choiceOption, integerOption, perspectiveOption } from '../../input/options.js';
import { resolveSource } from '../../input/source.js';
import { requireAliasAndLabel } from '../alias-label.js';
import { flagAndValue, parseOptions, shellWord } from '../kit.js';
import type { JournalMode } from '../../state/batch-journal.js';
import { jsonIndent } from '../../io/output.js';
import { DOCUMENT_FIELDS, notePreview } from './fields.js';
import { submitBatch } from './submit-batch.js';

/**
 * `facectl docs submit`: one document from --content, a file or standard input, or a batch of them from
 * NDJSON. The kind of a file or of standard input is detected (see detectDocumentFormat) unless
 * --format names it; a file named *.ndjson or *.jsonl is always NDJSON (see readDocumentInput).
 */

export const STDIN_HINT =
  'pipe the document in (e.g. `facectl docs submit --alias ada --label notes - < notes.txt`), or use --file PATH or --content TEXT';

const optionsSchema = z.object({
  alias: aliasOption.optional(),
  label: z.string().min(1, { error: 'must not be empty' }).optional(),
  perspective: perspectiveOption.optional(),
  content: z.string().optional(),
  file: z.string().optional(),
  format: choiceOption(['text', 'json', 'ndjson']).optional(),
  concurrency: integerOption(1, 64, 'requests').default(4),
  continueOnError: z.boolean().default(false),
  resume: z.boolean().default(false),
  restart: z.boolean().default(false),
});

/**
 * The flags, checked together. `file` is a path or `-` (standard input, from `--file -` or the `-`
 * argument); --resume and --restart become `journal`: what a batch does with an earlier run's record.
 */
export type SubmitOptions = Omit<z.output<typeof optionsSchema>, 'resume' | 'restart'> & { journal: JournalMode };

export function parseSubmitOptions(raw: Record<string, unknown>, input?: string): SubmitOptions {
  const options = parseOptions(optionsSchema, raw);
  if (input !== undefined && input !== '-') {
    throw new UsageError(`unexpected argument ${JSON.stringify(input)}`, {
      hint: `to submit a file, use ${flagAndValue('--file', input)}; for text, --content "..."`,
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
    await submitOne(ctx, preparedText(opts.content, await textFlags(ctx, opts)));
    return;
  }
  const source = await resolveSource(ctx, opts.file as string, STDIN_HINT);
  const input = await readDocumentInput(source, {
    format: opts.format,
    defaults: opts,
    textDefaults: () => textFlags(ctx, opts),
    continueOnError: opts.continueOnError,
    batchFlag: opts.journal === 'new' ? undefined : `--${opts.journal}`,
    // A batch is bulk work from its first line on (a file's lines are all checked before any is sent).
    onBatch: () => void capYoungGeneration().catch(() => undefined),
  });
  if (input.kind === 'batch') {
    await submitBatch(ctx, {
      ...opts,
      source,
      lines: input.lines,
      total: input.total,
      resumeCommand: resumeCommand(ctx, opts),
    });
    return;
  }
  try {
    await submitOne(ctx, input.prepared);
  } finally {
    await input.prepared.dispose();
  }
}

/** Plain text needs --alias and --label; on a terminal they are asked for. */
async function textFlags(ctx: Context, opts: SubmitOptions): Promise<DocumentDefaults> {
  return { ...(await requireAliasAndLabel(ctx, opts, 'document')), perspective: opts.perspective };
}

export async function submitOne(ctx: Context, prepared: PreparedDocument): Promise<Document> {
  const api = await ctx.api();
  const body = prepared.document;
  if (prepared.body === undefined) {
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
    const document = await api.call(
      createDocument,
      { body },
      { signal: ctx.signal, rawBody: prepared.body, largeStrings: large },
    );
    if (ctx.out.json && ctx.globals.jq !== undefined) ctx.out.record(await wholeAnswer(large, document));
    else if (ctx.out.json) await large.writeJson(ctx.io.stdout, document, jsonIndent(ctx.io));
    else ctx.out.record(document, DOCUMENT_FIELDS);
    ctx.out.success(`Submitted ${document.document_id} to ${document.alias}`);
    notePreview(ctx, document);
    return document;
  } finally {
    await large.dispose();
  }
}

/**
 * The answer with its content read back from the spool file, for --jq: jq needs the whole value (the
 * memory is then that of any JSON document of this size; without --jq the content is never held).
 */
async function wholeAnswer(large: LargeStrings, document: object): Promise<object> {
  const pieces: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      pieces.push(chunk.toString());
      done();
    },
  });
  await large.writeJson(sink, document);
  return JSON.parse(pieces.join('')) as object;
}

/**
 * The command that resumes a batch: its input, every flag that shapes the bodies sent (so each line's
 * hash and Idempotency-Key are the same again) or the output, and --resume.
 */
export function resumeCommand(ctx: Context, opts: SubmitOptions): string {
  const words = [
    'facectl',
    'docs',
    'submit',
    ...(opts.file === '-' ? ['-'] : ['--file', opts.file ?? '-']),
    '--resume',
  ];
  const flag = (name: string, value: string | undefined) => {
    if (value !== undefined) words.push(name, value);
  };
  flag('--alias', opts.alias);
  flag('--label', opts.label);
  flag('--perspective', opts.perspective ?? undefined);
  flag('--format', opts.format);
  if (opts.concurrency !== 4) flag('--concurrency', String(opts.concurrency));
  if (opts.continueOnError) words.push('--continue-on-error');
  if (ctx.globals.jq !== undefined) flag('--jq', ctx.globals.jq);
  else if (ctx.globals.json) words.push('--json');
  flag('--base-url', ctx.globals.baseUrl);
  flag('--profile', ctx.globals.profile);
  if (ctx.globals.insecureHttp) words.push('--insecure-http');
  if (ctx.globals.apiKeyStdin) words.push('--api-key-stdin');
  return words.map(shellWord).join(' ');
}
