import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { addVerbs, WAIT_OPTIONS, withExtensionNote } from '../kit.js';

/** `facectl threads ...`: declared with commander only; the verb modules load when a command runs. */
export function registerThreadsCommands(program: Command, ctx: Context): void {
  const threads = program.command('threads').description('Create compile threads and replace their messages.');
  addVerbs(threads, ctx, {
    create: {
      description: 'Create a compile thread for a face. On a terminal, a missing --alias or --label is asked for.',
      options: [
        ['--alias <alias>', 'alias of the face the thread belongs to'],
        ['--label <label>', 'label of the thread'],
        [
          '--interviewer-billing-source <source>',
          'oauth, compile or credits: overrides the automatic choice (oauth, then compile quota, then credits)',
        ],
      ],
      examples: [
        'facectl threads create --alias ada-lovelace --label "Interview 1"',
        'facectl threads create --alias ada-lovelace --label "Interview 2" --interviewer-billing-source credits',
        'facectl threads create --alias ada-lovelace --label nightly --json --no-input | jq -r .thread_id',
      ],
      run: async () => (await import('./create.js')).createThreadAction,
    },
    'replace-messages': {
      summary: 'Replace every message of a thread',
      description:
        'Replace every message of a thread (the old ones are archived).\n\n' +
        'The input is a JSON array [{"role", "content", "from"}, ...] or an object {"messages": [...]}, ' +
        'from --file PATH or - (standard input).',
      arguments: [
        ['<thread_id>', 'the thread id (thr_...)'],
        ['[input]', '- to read the messages from standard input'],
      ],
      options: [['--file <path>', 'read the messages from a file (- for standard input)']],
      examples: [
        'facectl threads replace-messages thr_4kP9x --file interview.json',
        `echo '[{"role":"user","content":"Hello","from":"Charles"}]' | facectl threads replace-messages thr_4kP9x -`,
        'facectl threads replace-messages thr_4kP9x --file messages.json --json --no-input | jq .message_count',
      ],
      run: async () => (await import('./replace-messages.js')).replaceMessagesAction,
    },
    get: {
      description: withExtensionNote('Show a thread with its messages.'),
      arguments: [['<thread_id>', 'the thread id (thr_...)']],
      examples: ['facectl threads get thr_4kP9x', 'facectl threads get thr_4kP9x --json | jq .messages'],
      run: async () => (await import('./get.js')).getThreadAction,
    },
    sync: {
      description: withExtensionNote(
        'Sync a thread: its token_count is charged to its billing source and preparation starts.',
      ),
      arguments: [['<thread_id>', 'the thread id (thr_...)']],
      options: WAIT_OPTIONS,
      examples: [
        'facectl threads sync thr_4kP9x',
        'facectl threads sync thr_4kP9x --wait --timeout 60',
        'facectl threads sync thr_4kP9x --wait --json --no-input | jq .prepare_status',
      ],
      run: async () => (await import('./sync.js')).syncThreadAction,
    },
  });
}
