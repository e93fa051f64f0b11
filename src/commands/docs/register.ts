import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { addVerbs, WAIT_OPTIONS, withExtensionNote } from '../kit.js';

/** `facectl docs ...`: declared with commander only; the verb modules load when a command runs. */
export function registerDocsCommands(program: Command, ctx: Context): void {
  const docs = program.command('docs').description('Submit, read and sync compile documents.');
  addVerbs(docs, ctx, {
    submit: {
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
        'A batch is sent --concurrency documents at a time (when the service rate-limits it, all of them pause as it asks), with one result per line (NDJSON under --json). A batch from a file is checked line by line before anything is sent: one bad line and nothing is sent, unless --continue-on-error. Standard input can be read only once, so its lines are checked as they are sent and the first bad line stops the batch (the lines before it were submitted). Any failed line makes the exit code non-zero; 2 (bad input) only when nothing was sent: a batch that submitted some lines and failed on a bad one exits 1.',
        '',
        'A batch keeps a record of the lines the service acknowledged (in the state directory, $FACECTL_STATE_DIR). When it stops short (Ctrl-C, a failure, a lost connection), --resume sends only the lines not yet submitted, and a line that was in flight is not created twice. While such a record exists, a plain rerun is refused: choose --resume or --restart. --resume of a batch that already finished sends nothing (its results are reported again); without --resume, a run is a new batch.',
        '',
        'token_count in the answer is a preview: nothing is charged until the document is synced.',
      ].join('\n'),
      arguments: [['[input]', '- to read the document(s) from standard input']],
      options: [
        ['--alias <alias>', 'alias of the face the document belongs to (for JSON input: the default)'],
        ['--label <label>', 'label of the document (for JSON input: the default)'],
        ['--perspective <perspective>', 'first-person or third-person (the service defaults to third-person)'],
        ['--content <text>', 'the document text'],
        ['--file <path>', 'read the document(s) from a file (- for standard input)'],
        ['--format <format>', 'text, json or ndjson (default: detected)'],
        ['--concurrency <n>', 'requests in flight for a batch, 1 to 64', '4'],
        ['--continue-on-error', 'in a batch, report bad or refused lines and keep sending the others'],
        ['--resume', 'continue a batch that stopped short: send only the lines not yet submitted'],
        ['--restart', 'send every line of a batch again, dropping the record of an unfinished earlier run'],
      ],
      examples: [
        'facectl docs submit --alias ada-lovelace --label "Letter to Babbage" --file letter.txt',
        'cat docs.ndjson | facectl docs submit --alias ada-lovelace --json --no-input - > results.ndjson',
        `echo '{"alias":"ada-lovelace","label":"Note G","content":"..."}' | facectl docs submit -`,
        'facectl docs submit --file docs.ndjson --concurrency 16 --resume',
      ],
      run: async () => (await import('./submit.js')).submitAction,
    },
    get: {
      description: withExtensionNote('Show a document.'),
      arguments: [['<document_id>', 'the document id (doc_...)']],
      examples: ['facectl docs get doc_7Hc2Lq', 'facectl docs get doc_7Hc2Lq --json | jq .prepare_status'],
      run: async () => (await import('./get.js')).getDocumentAction,
    },
    sync: {
      description: withExtensionNote(
        'Sync a document: its token_count is charged to the billing source and preparation starts.',
      ),
      arguments: [['<document_id>', 'the document id (doc_...)']],
      options: WAIT_OPTIONS,
      examples: [
        'facectl docs sync doc_7Hc2Lq',
        'facectl docs sync doc_7Hc2Lq --wait --timeout 60',
        'facectl docs sync doc_7Hc2Lq --wait --json --no-input | jq .prepare_status',
      ],
      run: async () => (await import('./sync.js')).syncDocumentAction,
    },
  });
}
