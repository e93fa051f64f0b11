import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { addVerbs, withExtensionNote } from '../kit.js';

/** `facectl faces ...`: declared with commander only; the verb module loads when the command runs. */
export function registerFacesCommands(program: Command, ctx: Context): void {
  const faces = program.command('faces').description('Create and read faces.');
  addVerbs(faces, ctx, {
    create: {
      description: 'Create a face. On a terminal, a missing --name or --alias is asked for.',
      options: [
        ['--name <name>', 'display name'],
        ['--alias <alias>', 'unique slug: lower-case letters, digits and single hyphens, 3 to 64 characters'],
        ['--basic-facts <json>', 'a JSON object: inline, @FILE to read a file, or - to read standard input'],
        ['--default-tools <tools>', 'comma-separated tool names'],
        ['--default-model <model>', 'default language model'],
        ['--formula <formula>', 'the formula of the face'],
      ],
      examples: [
        'facectl faces create --name "Ada Lovelace" --alias ada-lovelace',
        `facectl faces create --name Ada --alias ada --basic-facts '{"born": 1815}' --default-tools search,calc`,
        'cat facts.json | facectl faces create --name Ada --alias ada --basic-facts - --json --no-input',
      ],
      run: async () => (await import('./create.js')).createFaceAction,
    },
    get: {
      description: withExtensionNote('Show a face, by uid or alias.'),
      arguments: [['<face_id>', 'the face uid (face_...) or its alias']],
      examples: ['facectl faces get ada-lovelace', 'facectl faces get face_3x9Qk2 --json | jq .component_counts'],
      run: async () => (await import('./get.js')).getFaceAction,
    },
  });
}

/** `facectl import <face_id> <url>`: a top-level verb, but it adds material to a face, so it lives here. */
export function registerImportCommand(program: Command, ctx: Context): void {
  addVerbs(program, ctx, {
    import: {
      summary: 'Import a document from a URL into a face',
      description:
        'Import a document from a URL into a face: the service fetches the URL (http or https).\n\n' +
        'token_count in the answer is a preview: nothing is charged until the document is synced.',
      arguments: [
        ['<face_id>', 'the face uid (face_...) or its alias'],
        ['<url>', 'the http(s) URL the service fetches'],
      ],
      options: [
        ['--type <type>', 'document or transcript (default document)'],
        ['--perspective <perspective>', 'first-person or third-person (default third-person)'],
        ['--face-speaker <name>', 'in a transcript, the speaker who is the face'],
      ],
      examples: [
        'facectl import ada-lovelace https://example.com/letters/1843.txt',
        'facectl import ada-lovelace https://example.com/interview.txt --type transcript --face-speaker Ada',
        'facectl import face_3x9Qk2 https://example.com/notes.txt --json --no-input | jq -r .document_id',
      ],
      run: async () => (await import('../import.js')).importAction,
    },
  });
}
