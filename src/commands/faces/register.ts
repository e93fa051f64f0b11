import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { addExamples, lazyAction } from '../kit.js';

const EXTENSION_NOTE =
  'Uses an endpoint the published interface does not show (an extension that `facectl serve` implements).';
const withNote = (text: string) => `${text}\n\n${EXTENSION_NOTE}`;

/** `facectl faces ...`: declared with commander only; the verb module loads when the command runs. */
export function registerFacesCommands(program: Command, ctx: Context): void {
  const faces = program.command('faces').description('Create and read faces.');

  const create = faces
    .command('create')
    .description('Create a face. On a terminal, a missing --name or --alias is asked for.')
    .option('--name <name>', 'display name')
    .option('--alias <alias>', 'unique slug: lower-case letters, digits and single hyphens, 3 to 64 characters')
    .option('--basic-facts <json>', 'a JSON object: inline, @FILE to read a file, or - to read standard input')
    .option('--default-tools <tools>', 'comma-separated tool names')
    .option('--default-model <model>', 'default language model')
    .option('--formula <formula>', 'the formula of the face')
    .action(lazyAction(ctx, async () => (await import('./create.js')).createFaceAction));
  addExamples(create, [
    'facectl faces create --name "Ada Lovelace" --alias ada-lovelace',
    `facectl faces create --name Ada --alias ada --basic-facts '{"born": 1815}' --default-tools search,calc`,
    'cat facts.json | facectl faces create --name Ada --alias ada --basic-facts - --json --no-input',
  ]);

  const get = faces
    .command('get')
    .description(withNote('Show a face, by uid or alias.'))
    .argument('<face_id>', 'the face uid (face_...) or its alias')
    .action(lazyAction<[string]>(ctx, async () => (await import('./get.js')).getFaceAction));
  addExamples(get, ['facectl faces get ada-lovelace', 'facectl faces get face_3x9Qk2 --json | jq .component_counts']);
}

/** `facectl import <face_id> <url>`: a top-level verb, but it adds material to a face, so it lives here. */
export function registerImportCommand(program: Command, ctx: Context): void {
  const importCommand = program
    .command('import')
    .summary('Import a document from a URL into a face')
    .description(
      'Import a document from a URL into a face: the service fetches the URL (http or https).\n\n' +
        'token_count in the answer is a preview: nothing is charged until the document is synced.',
    )
    .argument('<face_id>', 'the face uid (face_...) or its alias')
    .argument('<url>', 'the http(s) URL the service fetches')
    .option('--type <type>', 'document or transcript (default document)')
    .option('--perspective <perspective>', 'first-person or third-person (default third-person)')
    .option('--face-speaker <name>', 'in a transcript, the speaker who is the face')
    .action(lazyAction<[string, string]>(ctx, async () => (await import('../import.js')).importAction));
  addExamples(importCommand, [
    'facectl import ada-lovelace https://example.com/letters/1843.txt',
    'facectl import ada-lovelace https://example.com/interview.txt --type transcript --face-speaker Ada',
    'facectl import face_3x9Qk2 https://example.com/notes.txt --json --no-input | jq -r .document_id',
  ]);
}
