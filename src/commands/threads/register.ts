import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { addExamples, lazyAction } from '../kit.js';

const EXTENSION_NOTE =
  'Uses an endpoint the published interface does not show (an extension that `facectl serve` implements).';
const withNote = (text: string) => `${text}\n\n${EXTENSION_NOTE}`;

/** `facectl threads ...`: declared with commander only; the verb modules load when a command runs. */
export function registerThreadsCommands(program: Command, ctx: Context): void {
  const threads = program.command('threads').description('Create compile threads and replace their messages.');

  const create = threads
    .command('create')
    .description('Create a compile thread for a face. On a terminal, a missing --alias or --label is asked for.')
    .option('--alias <alias>', 'alias of the face the thread belongs to')
    .option('--label <label>', 'label of the thread')
    .option(
      '--interviewer-billing-source <source>',
      'oauth, compile or credits: overrides the automatic choice (oauth, then compile quota, then credits)',
    )
    .action(lazyAction(ctx, async () => (await import('./create.js')).createThreadAction));
  addExamples(create, [
    'facectl threads create --alias ada-lovelace --label "Interview 1"',
    'facectl threads create --alias ada-lovelace --label "Interview 2" --interviewer-billing-source credits',
    'facectl threads create --alias ada-lovelace --label nightly --json --no-input | jq -r .thread_id',
  ]);

  const replace = threads
    .command('replace-messages')
    .summary('Replace every message of a thread')
    .description(
      'Replace every message of a thread (the old ones are archived).\n\n' +
        'The input is a JSON array [{"role", "content", "from"}, ...] or an object {"messages": [...]}, ' +
        'from --file PATH or - (standard input).',
    )
    .argument('<thread_id>', 'the thread id (thr_...)')
    .argument('[input]', '- to read the messages from standard input')
    .option('--file <path>', 'read the messages from a file (- for standard input)')
    .action(
      lazyAction<[string, string | undefined]>(
        ctx,
        async () => (await import('./replace-messages.js')).replaceMessagesAction,
      ),
    );
  addExamples(replace, [
    'facectl threads replace-messages thr_4kP9x --file interview.json',
    `echo '[{"role":"user","content":"Hello","from":"Charles"}]' | facectl threads replace-messages thr_4kP9x -`,
    'facectl threads replace-messages thr_4kP9x --file messages.json --json --no-input | jq .message_count',
  ]);

  const get = threads
    .command('get')
    .description(withNote('Show a thread with its messages.'))
    .argument('<thread_id>', 'the thread id (thr_...)')
    .action(lazyAction<[string]>(ctx, async () => (await import('./get.js')).getThreadAction));
  addExamples(get, ['facectl threads get thr_4kP9x', 'facectl threads get thr_4kP9x --json | jq .messages']);

  const sync = threads
    .command('sync')
    .description(withNote('Sync a thread: its token_count is charged to its billing source and preparation starts.'))
    .argument('<thread_id>', 'the thread id (thr_...)')
    .option('--wait', 'wait until preparation is ready, with a progress bar')
    .option('--timeout <seconds>', 'with --wait: give up after this many seconds (default 300)')
    .action(lazyAction<[string]>(ctx, async () => (await import('./sync.js')).syncThreadAction));
  addExamples(sync, [
    'facectl threads sync thr_4kP9x',
    'facectl threads sync thr_4kP9x --wait --timeout 60',
    'facectl threads sync thr_4kP9x --wait --json --no-input | jq .prepare_status',
  ]);
}
