import { PassThrough } from 'node:stream';
import { text } from 'node:stream/consumers';
import type { LargeStrings } from '../../api/large-strings.js';
import type { Context } from '../../context.js';
import { PERSPECTIVES } from '../../contract/values.js';
import { CliError, ExitCode, OUTPUT_CLOSED, OUTPUT_FAILED, UsageError } from '../../errors.js';
import type { PreparedDocument } from '../../input/document-input.js';
import type { DocumentDefaults } from '../../input/documents.js';
import { jsonIndent } from '../../io/output.js';
import type { JournalMode } from '../../state/batch-journal.js';
import { checkAlias, flagAndValue, jqCommand, notEmpty, requireAliasAndLabel, verb } from '../kit.js';
import type { Flags, FlagValues } from '../verb.js';
import { DOCUMENT_FIELDS, type DocumentAnswer, notePreview } from './fields.js';

const STDIN_HINT =
  'pipe the document in (e.g. `facectl docs submit --alias ada --label notes - < notes.txt`), or use --file PATH or --content TEXT';

const flags = {
  alias: {
    value: '<alias>',
    help: 'alias of the face the document belongs to (for JSON input: the default)',
    check: checkAlias,
  },
  label: { value: '<label>', help: 'label of the document (for JSON input: the default)', check: notEmpty },
  perspective: {
    value: '<perspective>',
    help: 'whose voice the document is in; the service defaults to third-person',
    choices: PERSPECTIVES,
  },
  content: { value: '<text>', help: 'the document text' },
  file: { value: '<path>', help: 'read the document, or the batch, from a file (- for standard input)' },
  format: { value: '<format>', help: 'the kind of input, else detected', choices: ['text', 'json', 'ndjson'] },
  concurrency: {
    value: '<n>',
    type: 'int',
    min: 1,
    max: 64,
    unit: 'requests',
    default: '4',
    help: 'requests in flight for a batch',
  },
  continueOnError: { help: 'in a batch, report bad or refused lines and keep sending the others' },
  resume: { help: 'continue a batch that stopped short: send only the lines not yet submitted' },
  restart: { help: 'send every line of a batch again, dropping the record of an unfinished earlier run' },
} as const satisfies Flags;

export default verb({
  summary: 'Submit a document, or a batch of them (NDJSON)',
  description: [
    'Submit a document, or a batch of them.',
    '',
    'The input is --content TEXT, --file PATH, or - (standard input). A file or standard input is read as:',
    '',
    '  json    one JSON document {"alias", "content", "label", "perspective"}',
    '  ndjson  one such document per line: a batch',
    '  text    anything else: the content, with --alias and --label',
    '',
    'For JSON and NDJSON, --alias, --label and --perspective fill the fields a document leaves out. The kind is detected (a first line that is a whole JSON object, followed by more lines, is NDJSON; a file named *.ndjson or *.jsonl is NDJSON even of one line); --format names it.',
    '',
    'A batch is sent --concurrency documents at a time (when the service rate-limits it, all of them pause as it asks), with one result per line (NDJSON under --json). A batch from a file is checked line by line before anything is sent (JSON, an object, the type of each field): one bad line and nothing is sent, unless --continue-on-error; a line the service refuses by its own rules (a length, a character) fails as it is sent. Standard input can be read only once, so its lines are checked as they are sent and the first bad line stops the batch (the lines before it were submitted). Any failed line makes the exit code non-zero; 2 (bad input) only when nothing was sent: a batch that submitted some lines and failed on a bad one exits 1.',
    '',
    'A batch keeps a record of the lines the service acknowledged, by content, for its input: the file, or standard input (in the state directory, $FACECTL_STATE_DIR); the same lines through another input are another batch. When it stops short (Ctrl-C, a failure, a lost connection), --resume sends only the lines never acknowledged, wherever they now stand (lines moved, added or removed since are told apart), and a line that was in flight is not created twice. A plain run whose lines an unfinished batch acknowledged is refused: choose --resume or --restart; other input is a batch of its own, refused as well while it holds a line an unfinished batch here submitted. --resume of a batch that already finished sends only lines added or edited since (an edited line is a new document; the results of the lines still in the input are reported again). Lines are known by the documents they send (another form of the same JSON, keys reordered or spaced otherwise, is the same line): when none of the lines a batch recorded is left (every document edited, or completed by other flags), --resume refuses, as does a plain run after a stop, and --restart sends every line. Without --resume, a run is a new batch.',
    '',
    'token_count in the answer is a preview: nothing is charged until the document is synced.',
  ].join('\n'),
  args: [['[input]', '- to read the document, or the batch, from standard input']],
  flags,
  examples: [
    'facectl docs submit --alias ada-lovelace --label "Letter to Babbage" --file letter.txt',
    'cat docs.ndjson | facectl docs submit --alias ada-lovelace --json --no-input - > results.ndjson',
    `echo '{"alias":"ada-lovelace","label":"Note G","content":"..."}' | facectl docs submit -`,
    'facectl docs submit --file docs.ndjson --concurrency 16 --resume  # after a run that stopped short: sends only the rest',
  ],
  run: (ctx, given, input) => runSubmit(ctx, submitOptions(given, input)),
});

/** The flags, checked together: `file` is a path or `-` (standard input); --resume and --restart become `journal`. */
export type SubmitOptions = Omit<FlagValues<typeof flags>, 'resume' | 'restart'> & { journal: JournalMode };

export function submitOptions(options: FlagValues<typeof flags>, input?: string): SubmitOptions {
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

export async function runSubmit(ctx: Context, opts: SubmitOptions): Promise<void> {
  const [{ preparedText, readDocumentInput }, { resolveSource }, { tuneForBulk }] = await Promise.all([
    import('../../input/document-input.js'),
    import('../../input/source.js'),
    import('../../api/bulk-v8.js'),
  ]);
  if (opts.content !== undefined) {
    await submitOne(ctx, preparedText(opts.content, await textFlags(ctx, opts)));
    return;
  }
  const source = await resolveSource(ctx, opts.file as string, STDIN_HINT);
  const input = await readDocumentInput(source, {
    ...opts,
    defaults: opts,
    textDefaults: () => textFlags(ctx, opts),
    batchHint: (filter) => batchPipeline(ctx, opts, filter),
    batchFlag: opts.journal === 'new' ? undefined : `--${opts.journal}`,
    // A batch from its first line on, a text once it is large: V8 set for bulk work (bulk-v8.ts).
    onBulk: () => void tuneForBulk().catch(() => undefined),
  });
  if (input.kind === 'batch') {
    const { submitBatch } = await import('./submit-batch.js');
    await submitBatch(ctx, {
      ...opts,
      source,
      read: input.read,
      reread: input.reread,
      resumeCommand: resumeCommand(ctx, opts),
      resumeWithoutJq: resumeCommand(ctx, opts, false),
      cwd: ctx.runtime.cwd(),
    });
    return;
  }
  // The document's own fields win over the flags (which fill what it leaves out): said, not silently.
  for (const field of ['alias', 'label', 'perspective'] as const) {
    const given = opts[field];
    const own = input.prepared.document[field];
    if (given !== undefined && own !== undefined && own !== given) {
      ctx.out.warn(`--${field} not used: ${source.name} gives its own ${field} (${JSON.stringify(own)})`);
    }
  }
  await submitOne(ctx, input.prepared).finally(() => input.prepared.dispose?.());
}

async function textFlags(ctx: Context, opts: SubmitOptions): Promise<DocumentDefaults> {
  return { ...(await requireAliasAndLabel(ctx, opts, 'document')), perspective: opts.perspective };
}

export async function submitOne(ctx: Context, prepared: PreparedDocument): Promise<DocumentAnswer> {
  const [api, { createDocument }, { LargeStrings }] = await Promise.all([
    ctx.api(),
    import('../../contract/documents.js'),
    import('../../api/large-strings.js'),
  ]);
  const { document: body, body: rawBody } = prepared;
  // The service echoes the whole document: a streamed one's content is spooled (for --json) or dropped, not held.
  const large =
    rawBody === undefined
      ? undefined
      : new LargeStrings({ fields: ['content'], keep: ctx.out.json ? 'spool' : 'none' });
  try {
    const document = await api.call(createDocument, { body }, { signal: ctx.signal, rawBody, largeStrings: large });
    const id = document.document_id;
    const written = `the document was created all the same: ${id} (\`facectl docs get ${id}\`); submitting again makes another`;
    if (large && ctx.out.json && ctx.globals.jq !== undefined) {
      ctx.out.record(await wholeAnswer(large, document), undefined, written);
    } else if (large && ctx.out.json) {
      // Written here, not through ctx.out: a failed write (a full disk) says what was made, as ctx.out's would.
      await large.writeJson(ctx.io.stdout, document, jsonIndent(ctx.io)).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'EPIPE') {
          throw new CliError('standard output was closed', ExitCode.outputClosed, {
            code: OUTPUT_CLOSED,
            hint: written,
          });
        }
        throw new CliError(`cannot write to standard output: ${error.message}`, ExitCode.error, {
          code: OUTPUT_FAILED,
          hint: written,
          cause: error,
        });
      });
    } else ctx.out.record(document, DOCUMENT_FIELDS, written);
    ctx.out.success(`Submitted ${document.document_id} to ${document.alias ?? body.alias}`);
    notePreview(ctx, document);
    return document;
  } finally {
    await large?.dispose();
  }
}

/** The answer with its content read back from the spool file: --jq needs the whole value. */
async function wholeAnswer(large: LargeStrings, document: object): Promise<object> {
  const sink = new PassThrough();
  const read = text(sink);
  await large.writeJson(sink, document);
  sink.end();
  return JSON.parse(await read) as object;
}

/** Resumes the batch: its input, --resume, and the flags (submitCommand; `jq` false: --json for its --jq). */
export function resumeCommand(ctx: Context, opts: SubmitOptions, jq = true): string {
  const input = opts.file === '-' ? '-' : flagAndValue('--file', opts.file ?? '-');
  return submitCommand(ctx, opts, `${input} --resume${opts.format ? ` --format ${opts.format}` : ''}`, jq);
}

/**
 * The line that sends a JSON array (`jq -c '.[]'`) or objects one after another (`jq -c .`; a file of one a line as
 * it is) as a batch,
 * with the flags given (submitCommand); with --api-key-stdin, the key's line first.
 */
function batchPipeline(ctx: Context, opts: SubmitOptions, filter: string | undefined): string {
  const path = opts.file ?? '-';
  // A file that is NDJSON already is sent as it is, so its batch is known by its path (--resume).
  if (filter === undefined && path !== '-')
    return submitCommand(ctx, opts, `${flagAndValue('--file', path)} --format ndjson`);
  const jq = jqCommand(filter ?? '.', path, true);
  // As docs/usage.md writes it; the variable unset, the shell says so and no document line becomes the key.
  const key =
    path === '-' ? 'IFS= read -r key; echo "$key"' : `printf '%s\\n' "\${FACECTL_KEY:?set FACECTL_KEY to the API key}"`;
  const input = ctx.globals.apiKeyStdin ? `{ ${key}; ${jq}; }` : jq;
  return `${path === '-' ? '... | ' : ''}${input} | ${submitCommand(ctx, opts, '--format ndjson')} -`;
}

/**
 * `facectl docs submit` with `head` (the input, as typed), then every flag given that shapes the bodies
 * (so keys match again), where they go (a ring pasted a hint without --base-url: another service), or the output.
 */
function submitCommand(ctx: Context, opts: SubmitOptions, head: string, jq = true): string {
  const words = ['facectl docs submit', head];
  const flag = (name: string, value: string | undefined) => {
    if (value !== undefined) words.push(flagAndValue(name, value));
  };
  for (const key of ['alias', 'label', 'perspective'] as const) flag(`--${key}`, opts[key]);
  if (opts.concurrency !== 4) flag('--concurrency', String(opts.concurrency));
  if (opts.continueOnError) words.push('--continue-on-error');
  if (jq && ctx.globals.jq !== undefined) flag('--jq', ctx.globals.jq);
  else if (ctx.globals.json) words.push('--json');
  flag('--base-url', ctx.globals.baseUrl);
  flag('--profile', ctx.globals.profile);
  if (ctx.globals.insecureHttp) words.push('--insecure-http');
  if (ctx.globals.apiKeyStdin) words.push('--api-key-stdin');
  return words.join(' ');
}
