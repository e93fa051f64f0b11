import { mkdirSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runSubmit, submitOptions } from '../../src/commands/docs/submit.js';
import { run } from '../../src/main.js';
import { contextFor, eventually, requestCount, runCommand } from '../helpers/command-harness.js';
import { call, expectContract } from '../helpers/service.js';
import { useService, useTempFiles } from '../helpers/service-suite.js';
import { argv, expectRefused } from '../helpers/unit-harness.js';

const service = useService({}, { faces: ['ada-lovelace', 'grace-hopper'] });
const { dir, file } = useTempFiles('facectl-submit-');

const stored = async (id: string) =>
  expectContract(
    'getDocument',
    await call(service, 'getDocument', { key: service.key('pro'), params: { document_id: id } }),
    200,
  );
/** Documents of the pro user whose label starts with `prefix` (what a batch created). */
const storedWithLabel = (prefix: string) =>
  [...service.store.values('documents')]
    .filter((d) => d.label.startsWith(prefix))
    .sort((a, b) => a.label.localeCompare(b.label));
const ndjson = (docs: object[]) => `${docs.map((d) => JSON.stringify(d)).join('\n')}\n`;
/**
 * An NDJSON file with one document per entry of `aliases`, labelled batch-<letter>-1, -2, … with the
 * content <letter>1, <letter>2, …; each has the alias given (none where the entry is undefined: --alias says it).
 */
const batchFile = (name: string, letter: string, aliases: (string | undefined)[]) =>
  file(
    name,
    ndjson(
      aliases.map((alias, i) => ({
        label: `batch-${letter}-${i + 1}`,
        content: `${letter}${i + 1}`,
        ...(alias && { alias }),
      })),
    ),
  );

describe('docs submit: one document', () => {
  it('run() with --content: stored as given; the output says token_count is a preview', async () => {
    const tc = contextFor(service);
    await runSubmit(
      tc.ctx,
      submitOptions({
        alias: 'ada-lovelace',
        label: 'note',
        content: 'Hello, "Babbage" ✓',
        concurrency: 4,
        continueOnError: false,
        resume: false,
        restart: false,
      }),
    );
    await tc.close();
    const id = /document_id\t(doc_\w+)/.exec(tc.stdout())?.[1] as string;
    const doc = await stored(id);
    expect(doc).toMatchObject({
      alias: 'ada-lovelace',
      label: 'note',
      content: 'Hello, "Babbage" ✓',
      source: 'submit',
    });
    expect(tc.stdout()).toContain(`token_count\t${doc.token_count}\n`);
    expect(tc.stderr()).toContain(`token_count ${doc.token_count} is a preview: nothing is charged until sync`);
  });

  it('--file with text and --perspective; --json prints the service object', async () => {
    const path = file('letter.txt', 'Dear Charles,\nthe engine…\n');
    const result = await runCommand(
      service,
      argv`docs submit --alias ada-lovelace --label letter --perspective first-person --file ${path} --json`,
    );
    expect(result.code, result.stderr).toBe(0);
    const printed = JSON.parse(result.stdout);
    expect(printed).toEqual(await stored(printed.document_id));
    expect(printed.content).toBe('Dear Charles,\nthe engine…\n');
    expect(service.store.get('documents', printed.document_id)?.perspective).toBe('first-person');
  });

  it('--json on a terminal: stdout one JSON document, every stderr line JSON (the preview a notice, no ✓ line)', async () => {
    const result = await runCommand(
      service,
      argv`docs submit --alias ada-lovelace --label notice --content ${'Hi'} --json`,
      { stderrIsTTY: true },
    );
    expect(result.code, result.stderr).toBe(0);
    const printed = JSON.parse(result.stdout);
    expect(printed).toEqual(await stored(printed.document_id));
    expect(
      result.stderr
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as unknown),
    ).toEqual([
      {
        notice:
          `token_count ${printed.token_count} is a preview: nothing is charged until sync ` +
          `(\`facectl docs sync ${printed.document_id}\`).`,
      },
    ]);
  });

  it('pipe form: a JSON document on standard input, completed by the flags', async () => {
    const result = await runCommand(service, ['docs', 'submit', '--label', 'from flag', '-', '--json', '--no-input'], {
      stdin: JSON.stringify({ alias: 'grace-hopper', content: 'COBOL notes', perspective: 'first-person' }, null, 2),
    });
    expect(result.code, result.stderr).toBe(0);
    const doc = await stored(JSON.parse(result.stdout).document_id);
    expect(doc).toMatchObject({ alias: 'grace-hopper', label: 'from flag', content: 'COBOL notes' });
  });

  it("a JSON document's own field wins over a differing flag, with a warning naming the flag; the same value says nothing", async () => {
    const stdin = JSON.stringify({ alias: 'grace-hopper', label: 'own label', content: 'compilers' });
    const result = await runCommand(service, ['docs', 'submit', '--label', 'flag label', '-', '--no-input'], { stdin });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('warning: --label not used: standard input gives its own label ("own label")');
    const id = /^document_id\t(\S+)$/m.exec(result.stdout)?.[1] as string;
    expect((await stored(id)).label).toBe('own label');
    const same = await runCommand(service, ['docs', 'submit', '--label', 'own label', '--alias', 'grace-hopper', '-'], {
      stdin,
    });
    expect(same.code, same.stderr).toBe(0);
    expect(same.stderr).not.toContain('not used');
  });

  it('pipe form: plain text on standard input', async () => {
    const result = await runCommand(
      service,
      ['docs', 'submit', '--alias', 'ada-lovelace', '--label', 'piped', '-', '--json'],
      {
        stdin: 'plain words {not json}\n',
      },
    );
    expect(result.code, result.stderr).toBe(0);
    expect((await stored(JSON.parse(result.stdout).document_id)).content).toBe('plain words {not json}\n');
  });

  it('--format text sends JSON-looking input as text', async () => {
    const content = '{"alias": "x", "content": "y"}\n';
    const result = await runCommand(
      service,
      argv`docs submit --alias ada-lovelace --label raw --format text --file ${file('raw.json', content)} --json`,
    );
    expect(result.code, result.stderr).toBe(0);
    expect((await stored(JSON.parse(result.stdout).document_id)).content).toBe(content);
  });

  it('text on standard input whose first line is a JSON object: refused as a bad NDJSON line, the hint names --format text', async () => {
    const result = await expectRefused(service, argv`docs submit --alias ada-lovelace --label mixed -`, [], {
      stdin: '{"note": "config-like json"}\nand then prose\n',
    });
    expect(result.stderr).toContain('error: standard input: line 1: content: required; unknown field "note"');
    expect(result.stderr).toContain(
      'nothing was submitted. Standard input was read as NDJSON, one document a line, as its first line is a JSON ' +
        'object: if it is one text document, pass --format text\n',
    );
    expect(result.stderr).not.toContain('--resume');
    // Read as NDJSON because --format said so: the hint does not put it on the first line (a ring's find).
    const forced = await expectRefused(service, argv`docs submit --format ndjson -`, [], {
      stdin: 'not json {\n',
    });
    expect(forced.stderr).toContain(
      'nothing was submitted. Standard input was read as NDJSON, one document a line (--format ndjson): if it is ' +
        'one text document, pass --format text\n',
    );
  });

  it('the same text from --file: the same --format text hint (detected, not given); no --continue-on-error when no line is valid', async () => {
    const path = file('note.txt', '{"note": "x"}\nSome prose.\n');
    const result = await expectRefused(
      service,
      argv`docs submit --alias ada-lovelace --label mixed --file ${path}`,
      [],
    );
    expect(result.stderr).toContain(`error: ${path}: 2 of 2 lines are invalid:`);
    expect(result.stderr).toContain(
      `nothing was sent. ${path} was read as NDJSON, one document a line, as its first line is a JSON ` +
        'object: if it is one text document, pass --format text; if it is a batch, fix the lines\n',
    );
    expect(result.stderr).not.toContain('--continue-on-error');
  });

  it('a JSON array given as NDJSON (--format ndjson), from a file or standard input: said so, with the jq conversion', async () => {
    const docs = [{ content: 'one' }, { content: 'two' }];
    const pretty = file('docs.json', JSON.stringify(docs, null, 2));
    const oneLine = file('docs-line.json', `${JSON.stringify(docs)}\n`);
    for (const path of [pretty, oneLine]) {
      const result = await expectRefused(service, argv`docs submit --format ndjson --label l --file ${path}`, []);
      expect(result.stderr).toBe(
        `error: ${path}: line 1 opens a JSON array: documents in NDJSON are one JSON object a line\n` +
          `send them as a batch: jq -c '.[]' ${path} | facectl docs submit --format ndjson --label l -\n`,
      );
    }
    const piped = await expectRefused(service, argv`docs submit --format ndjson -`, [], {
      stdin: JSON.stringify(docs, null, 2),
    });
    expect(piped.stderr).toBe(
      'error: standard input: line 1 opens a JSON array: documents in NDJSON are one JSON object a line\n' +
        "send them as a batch: ... | jq -c '.[]' | facectl docs submit --format ndjson -\n",
    );
  });

  it("README's recipe for a JSON array (jq -c '.[]' | docs submit --format ndjson -): one element is a batch of one, a result line", async () => {
    const stdin = `${JSON.stringify({ alias: 'ada-lovelace', label: 'array-of-one', content: 'only one' })}\n`;
    const result = await runCommand(service, ['docs', 'submit', '--format', 'ndjson', '-', '--json'], { stdin });
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      { line: 1, ok: true, document_id: expect.stringMatching(/^doc_/), token_count: expect.any(Number) },
    ]);
    expect(storedWithLabel('array-of-one')).toHaveLength(1);
  });

  it('one JSON object on standard input that is not a document: the hint names --format text, the fields once', async () => {
    const result = await expectRefused(service, argv`docs submit --alias ada-lovelace --label one -`, [], {
      stdin: '{"note": "hi"}',
    });
    expect(result.stderr).toContain(
      'error: standard input: content: required; unknown field "note" (a document is {"alias", "content", "label", "perspective"})\n',
    );
    expect(result.stderr).toContain(
      'it was read as one JSON document, being a JSON object: if it is a text document, pass --format text\n',
    );
    expect(result.stderr.split('a document is {').length).toBe(2);
  });

  it('a text that starts with "{" (TeX) is refused as invalid JSON, the hint naming --format text; with it, sent', async () => {
    const note = '{\\bf Note G} by Ada\nMore text.\n';
    const path = file('note.txt', note);
    const flags = argv`docs submit --alias ada-lovelace --label tex-note`;
    const hint = 'if it is a text document, pass --format text';
    const fromFile = await expectRefused(
      service,
      [...flags, '--file', path],
      [`error: ${path}: line 1, column 2: invalid JSON: unexpected "\\\\" where`, hint],
    );
    expect(fromFile.stdout).toBe('');
    await expectRefused(service, [...flags, '-'], ['error: standard input: line 1, column 2: invalid JSON', hint], {
      stdin: note,
    });
    expect(storedWithLabel('tex-note')).toEqual([]);
    const sent = await runCommand(service, [...flags, '--format', 'text', '--file', path]);
    expect(sent.code, sent.stderr).toBe(0);
    expect(storedWithLabel('tex-note').map((d) => d.content)).toEqual([note]);
  });

  it('terminal form: a missing --alias and --label are asked for', async () => {
    const terminal = { stdinIsTTY: true, stdoutIsTTY: true, answers: ['ada-lovelace', 'asked'] };
    const { code, tc } = await runCommand(service, ['docs', 'submit', '--content', 'typed at a terminal'], terminal);
    expect(code, tc.stderr()).toBe(0);
    tc.assertNoLeftoverAnswers();
    const id = /document_id +(doc_\w+)/.exec(stripVTControlCharacters(tc.stdout()))?.[1] as string;
    expect(await stored(id)).toMatchObject({ alias: 'ada-lovelace', label: 'asked', content: 'typed at a terminal' });
  });
});

describe('docs submit: bad input is exit 2 naming the flag, file or line; nothing sent', () => {
  const refused = async (argv: string[], message: string | RegExp, options: Parameters<typeof runCommand>[2] = {}) => {
    const before = requestCount(service);
    const result = await runCommand(service, ['docs', 'submit', ...argv], options);
    expect(result.code, result.stderr).toBe(2);
    if (typeof message === 'string') expect(result.stderr).toContain(message);
    else expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe('');
    expect(requestCount(service)).toBe(before);
    return result;
  };

  it('a file name after -- is refused with a --file hint that can be typed as shown (--file=--json, quoted spaces)', async () => {
    const hints: [string, string][] = [
      ['--json', '--file=--json'],
      ['-notes.md', '--file=-notes.md'],
      ['my notes.md', "--file 'my notes.md'"],
      ['notes.md', '--file notes.md'],
    ];
    for (const [name, hint] of hints) {
      const result = await refused(argv`--alias a --label dd -- ${name}`, '');
      expect(result.stderr).toBe(
        `error: unexpected argument ${JSON.stringify(name)}\nto submit a file, use ${hint}; for text, --content "..."\n`,
      );
    }
    // The hinted spelling passes the command-line check: --json is taken as the file's name.
    const followed = await refused(argv`--alias a --label dd --file=--json`, '');
    expect(followed.stderr).toBe('error: cannot read --json: no such file\n');
  });

  it('a JSON array of documents, or objects one after another, is never stored as text: the jq line that makes a batch', async () => {
    const docs = [
      { alias: 'ada-lovelace', label: 'arr-1', content: 'one' },
      { alias: 'ada-lovelace', label: 'arr-2', content: 'two' },
    ];
    const array = file('docs.json', JSON.stringify(docs));
    const result = await refused(
      ['--file', array, '--alias', 'ada-lovelace', '--label', 'l'],
      `error: ${array}: holds a JSON array of 2 items; one document is one JSON object, many are a batch in NDJSON (one object a line)\n`,
    );
    // The flags given come along: followed as printed, each line gets the fields they filled (a ring's finding).
    expect(result.stderr).toContain(
      `send them as a batch: jq -c '.[]' ${array} | facectl docs submit --format ndjson --alias ada-lovelace --label l -\n`,
    );
    // Whatever the file is called, and from standard input, pretty-printed or not.
    await refused(['--file', file('docs.txt', JSON.stringify(docs, null, 2))], 'holds a JSON array of 2 items');
    const piped = await refused(['-', '--alias', 'ada-lovelace', '--label', 'l'], 'holds a JSON array of 2 items', {
      stdin: ` \n${JSON.stringify(docs)}`,
    });
    expect(piped.stderr).toContain(
      "send them as a batch: ... | jq -c '.[]' | facectl docs submit --format ndjson --alias ada-lovelace --label l -\n",
    );
    // `jq '.[]'` prints the objects pretty, one after another.
    const sequence = await refused(
      ['-'],
      'error: standard input: holds JSON objects one after another; one document is one JSON object',
      { stdin: docs.map((d) => JSON.stringify(d, null, 2)).join('\n') },
    );
    expect(sequence.stderr).toContain('send them as a batch: ... | jq -c . | facectl docs submit --format ndjson -\n');
    // A file of one object a line (NDJSON given --format json) is sent as it is, by its path (a breaker's find: jq
    // would move the batch to standard input and could change each line's bytes).
    const lines = file('docs.ndjson', `${docs.map((d) => JSON.stringify(d)).join('\n')}\n`);
    const ndjson = await refused(
      ['--file', lines, '--format', 'json', '--label', 'l'],
      'holds JSON objects one after another',
    );
    expect(ndjson.stderr).toContain(
      `send them as a batch: facectl docs submit --file ${lines} --format ndjson --label l\n`,
    );
    const pretty = file('pretty.json', docs.map((d) => JSON.stringify(d, null, 2)).join('\n'));
    const spread = await refused(['--file', pretty, '--format', 'json'], 'holds JSON objects one after another');
    expect(spread.stderr).toContain(
      `send them as a batch: jq -c . ${pretty} | facectl docs submit --format ndjson -\n`,
    );
    // A .json file that parses but is no object, or does not parse, is said so; never sent as text.
    await refused(
      ['--file', file('words.json', '"just words"'), '--alias', 'ada-lovelace', '--label', 'l'],
      'found a string',
    );
    await refused(
      ['--file', file('broken.json', 'not json at all'), '--alias', 'ada-lovelace', '--label', 'l'],
      'line 1, column 1: invalid JSON',
    );
    expect(storedWithLabel('arr-')).toEqual([]);
    // Text that merely starts with a bracket is still text.
    const text = await runCommand(service, ['docs', 'submit', '-', '--alias', 'ada-lovelace', '--label', 'arr-text'], {
      stdin: '[Chorus] sung twice',
    });
    expect(text.code, text.stderr).toBe(0);
    expect(storedWithLabel('arr-').map((d) => d.content)).toEqual(['[Chorus] sung twice']);
  });

  it('missing, directory, empty, invalid UTF-8 and too large files (cases 7, 12)', async () => {
    const missing = join(dir, 'missing.txt');
    await refused(
      ['--alias', 'ada-lovelace', '--label', 'l', '--file', missing],
      `error: cannot read ${missing}: no such file`,
    );
    const folder = join(dir, 'folder');
    mkdirSync(folder);
    await refused(
      ['--alias', 'ada-lovelace', '--label', 'l', '--file', folder],
      `error: cannot read ${folder}: it is a directory`,
    );
    const empty = file('empty.txt', '');
    await refused(['--alias', 'ada-lovelace', '--label', 'l', '--file', empty], `error: ${empty} is empty`);
    const latin = file('latin.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    await refused(
      ['--alias', 'ada-lovelace', '--label', 'l', '--file', latin],
      `error: ${latin}: line 1: not valid UTF-8 text (byte 0xe9)`,
    );
    const huge = file('huge.txt', '');
    truncateSync(huge, 65 * 1024 * 1024); // sparse: refused by its size, before it is read
    await refused(
      ['--alias', 'ada-lovelace', '--label', 'l', '--file', huge],
      `error: ${huge} is larger than 64 MiB, the service's request size limit\nsplit it into several documents\n`,
    );
    // A device has no end to split: only that it is too large.
    const zero = await refused(['--alias', 'ada-lovelace', '--label', 'l', '--file', '/dev/zero'], 'error: /dev/zero');
    expect(zero.stderr).toBe("error: /dev/zero is larger than 64 MiB, the service's request size limit\n");
    await refused(['--alias', 'ada-lovelace', '--label', 'l', '-'], 'error: standard input is empty');
    // White space alone (`echo "$UNSET" |`) is no text either; --content sends it on purpose.
    const blank = file('blank.txt', '\n \t\r\n');
    await refused(
      ['--alias', 'ada-lovelace', '--label', 'l', '--file', blank],
      `error: ${blank} holds only white space`,
    );
    const piped = await refused(
      ['--alias', 'ada-lovelace', '--label', 'l', '-'],
      'standard input holds only white space',
      {
        stdin: '\n\n  \n',
      },
    );
    expect(piped.stderr).toContain('nothing was sent; to send it as it is, give it with --content');
    // Read as JSON too (it said "line 3, column 1: invalid JSON").
    await refused(['--format', 'json', '-'], 'error: standard input holds only white space', { stdin: '\n \n' });
  });

  it('standard input that is a terminal is refused at once (case 10)', async () => {
    const result = await refused(
      ['--alias', 'ada-lovelace', '--label', 'l', '-'],
      'expected input on standard input, but standard input is a terminal',
      {
        stdinIsTTY: true,
      },
    );
    expect(result.stderr).toContain('or use --file PATH or --content TEXT');
  });

  it('malformed JSON (case 8): truncated, trailing garbage', async () => {
    const truncated = file('truncated.json', '{\n  "alias": "ada-lovelace",\n  "content": "Hi');
    await refused(
      ['--file', truncated],
      `error: ${truncated}: line 3, column 14: invalid JSON: a string is not closed`,
    );
    const trailing = file('trailing.json', '{"alias": "ada-lovelace", "label": "l", "content": "Hi"} extra');
    await refused(
      ['--file', trailing],
      `error: ${trailing}: line 1, column 58: invalid JSON: unexpected text after the JSON value`,
    );
  });

  it('NDJSON with a bad line in the middle: every bad line named, nothing of the file sent', async () => {
    const lines = [
      { content: 'one', label: 'x1' },
      { content: 'two', label: 'x2', perspective: 'second-person' },
      { content: 'three', label: 'x3' },
    ].map((d) => JSON.stringify(d));
    lines.splice(3, 0, '{"content": "four", "label": ');
    const path = file('bad.ndjson', `${lines.join('\n')}\n`);
    const result = await refused(
      ['--alias', 'ada-lovelace', '--file', path],
      `error: ${path}: 2 of 4 lines are invalid:`,
    );
    expect(result.stderr).toContain('  line 2: perspective: must be one of first-person, third-person');
    expect(result.stderr).toContain('  line 4, column 30: invalid JSON: the text ends where a value was expected');
    expect(result.stderr).toContain('nothing was sent; fix the lines, or pass --continue-on-error');
  });

  const concurrency = '--concurrency: must be a whole number of requests from 1 to 64';
  it.each([
    ['--concurrency', '0', concurrency],
    ['--concurrency', '65', concurrency],
    ['--concurrency', 'many', concurrency],
    ['--format', 'xml', '--format: must be one of text, json, ndjson'],
    ['--perspective', 'second-person', '--perspective: must be one of first-person, third-person'],
    ['--alias', '', '--alias: an alias must not be empty'],
  ])('%s %j', async (flag, value, message) => {
    await refused(['--alias', 'ada-lovelace', '--label', 'l', '--content', 'x', flag, value], `error: ${message}`);
  });

  it('one source only, and one at least', async () => {
    await refused(['--content', 'x', '--file', 'y'], 'give only one of --content, --file and -');
    await refused(['--alias', 'ada-lovelace', '--label', 'l'], 'error: no document given');
    await refused(['notes.txt'], 'use --file notes.txt');
    await refused(['--content', 'x', '--format', 'ndjson'], '--format ndjson needs --file PATH or -');
    await refused(['--content', 'x'], '--alias and --label are required when not running interactively');
  });
});

describe('docs submit: NDJSON batches', () => {
  it('--json prints one result line per document; every document stored byte-exact', async () => {
    const docs = Array.from({ length: 12 }, (_, i) => ({
      label: `batch-a-${String(i).padStart(2, '0')}`,
      content: `Doc ${i}: "quoted" \\ back-slash, ünïcödé ✓ 🚀\n\ttabbed`,
    }));
    const path = file('good.ndjson', ndjson(docs));
    const result = await runCommand(
      service,
      argv`docs submit --alias ada-lovelace --file ${path} --concurrency 3 --json`,
    );
    expect(result.code, result.stderr).toBe(0);
    const results = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(results).toHaveLength(12);
    expect(results.map((r) => r.line).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    for (const r of results) {
      expect(r).toEqual({
        line: r.line,
        ok: true,
        document_id: expect.stringMatching(/^doc_/),
        token_count: expect.any(Number),
      });
      const doc = await stored(r.document_id);
      expect(doc.content).toBe(docs[r.line - 1]?.content);
      expect(doc.label).toBe(docs[r.line - 1]?.label);
    }
    const total = results.reduce((sum, r) => sum + r.token_count, 0);
    expect(result.stderr).toContain(
      `Submitted 12 of 12 documents. token_count total ${total} (a preview: nothing is charged until each document is synced).`,
    );
  });

  it('piped without --json: one tab-separated line per document', async () => {
    const path = batchFile('piped.ndjson', 'b', [undefined, undefined]);
    const result = await runCommand(service, ['docs', 'submit', '--alias', 'grace-hopper', '--file', path]);
    expect(result.code, result.stderr).toBe(0);
    const rows = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => line.split('\t'));
    expect(rows.map((r) => r[0]).sort()).toEqual(['1', '2']);
    for (const [line, id, tokens] of rows) {
      const doc = await stored(id as string);
      expect(doc.label).toBe(`batch-b-${line}`);
      expect(String(doc.token_count)).toBe(tokens);
    }
  });

  it('--continue-on-error sends the valid lines and reports the others; exit 1 (partly failed: 2 means nothing sent)', async () => {
    const path = file(
      'mixed.ndjson',
      `${JSON.stringify({ label: 'batch-c-1', content: 'c1' })}\nnot json\n${JSON.stringify({ label: 'batch-c-3', content: 'c3' })}\n`,
    );
    const result = await runCommand(
      service,
      argv`docs submit --alias ada-lovelace --file ${path} --continue-on-error --json`,
    );
    expect(result.code).toBe(1);
    const results = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line))
      .sort((a, b) => a.line - b.line);
    expect(results[1]).toEqual({
      line: 2,
      ok: false,
      error: { code: 'invalid_input', message: expect.stringMatching(/^column 1: invalid JSON/) },
    });
    expect(results.filter((r) => r.ok)).toHaveLength(2);
    expect(storedWithLabel('batch-c-').map((d) => d.content)).toEqual(['c1', 'c3']);
    expect(result.stderr).toContain('Submitted 2 of 3 documents, 1 failed.');
  });

  it('a refused line stops the batch by default; the exit code is the most pressing failure', async () => {
    // Line 2 names a face that does not exist (404); the batch stops there (concurrency 1).
    const path = batchFile('refused.ndjson', 'd', ['ada-lovelace', 'no-such-face', 'ada-lovelace']);
    const result = await runCommand(service, ['docs', 'submit', '--file', path, '--concurrency', '1', '--json']);
    expect(result.code).toBe(4);
    expect(storedWithLabel('batch-d-').map((d) => d.label)).toEqual(['batch-d-1']);
    expect(result.stderr).toContain('Submitted 1 of 3 documents, 1 failed, 1 not sent.');
    expect(result.stderr).toContain('the batch stopped at the first failure');
    const failed = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line))
      .find((r) => !r.ok);
    expect(failed).toMatchObject({ line: 2, ok: false, error: { code: expect.any(String) } });

    // With a key limited to one face, a refusal (403, exit 6) outranks the 404.
    const limitedKey = expectContract(
      'createApiKey',
      await call(service, 'createApiKey', { key: service.key('pro'), body: { allowed_face_ids: ['grace-hopper'] } }),
      201,
    ).key;
    const mixed = batchFile('mixed-failures.ndjson', 'e', ['no-such-face', 'ada-lovelace', 'grace-hopper']);
    const second = await runCommand(service, ['docs', 'submit', '--file', mixed, '--continue-on-error', '--json'], {
      apiKey: limitedKey,
    });
    expect(second.code).toBe(6);
    expect(storedWithLabel('batch-e-').map((d) => d.label)).toEqual(['batch-e-3']);
  });

  it('a refused line at the default concurrency: the message says which later lines in flight were still submitted', async () => {
    // Line 2 names a face that does not exist (404); line 3 was taken with it (4 workers), so it is
    // finished although the batch stopped.
    const path = batchFile('in-flight.ndjson', 'z', ['ada-lovelace', 'no-such-face', 'ada-lovelace']);
    const result = await runCommand(service, ['docs', 'submit', '--file', path, '--json']);
    expect(result.code).toBe(4);
    expect(storedWithLabel('batch-z-').map((d) => d.label)).toEqual(['batch-z-1', 'batch-z-3']);
    expect(JSON.parse(result.stderr)).toEqual({
      error: {
        code: 'batch_failed',
        message:
          '1 document failed (line 2: no face no-such-face); the batch stopped at the first failure, ' +
          'but 1 line after line 2, already in flight, was still submitted',
        hint: expect.stringMatching(/^Fix the cause, then run `facectl docs submit --file .* --resume --json`/),
        warnings: [
          'Submitted 2 of 3 documents, 1 failed. token_count total 4 (a preview: nothing is charged until each document is synced).',
        ],
      },
    });
  });

  it('from standard input, lines are checked as they are sent: the first bad line stops the batch', async () => {
    const stdin = `${JSON.stringify({ label: 'batch-f-1', content: 'f1' })}\n${JSON.stringify({ label: 'batch-f-2', content: 'f2' })}\n{"label": "batch-f-3", "content": 3}\n${JSON.stringify({ label: 'batch-f-4', content: 'f4' })}\n`;
    const result = await runCommand(service, ['docs', 'submit', '--alias', 'ada-lovelace', '-', '--concurrency', '1'], {
      stdin,
    });
    // Lines 1 and 2 were sent: a partly failed batch (exit 1), not "bad input, nothing sent" (2).
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error: standard input: line 3: content: must be a string, found number');
    expect(result.stderr).toContain('2 documents before it were already submitted');
    expect(storedWithLabel('batch-f-').map((d) => d.label)).toEqual(['batch-f-1', 'batch-f-2']);
  });

  it('from standard input, a bad FIRST line stops the batch before any later line is sent (--json)', async () => {
    const good = Array.from({ length: 99 }, (_, i) => ({
      alias: 'ada-lovelace',
      label: `batch-first-${i + 2}`,
      content: 'h',
    }));
    const stdin = ndjson([{ alias: 'ada-lovelace', label: 'batch-first-1' }, ...good]);
    const before = requestCount(service);
    const result = await runCommand(service, ['docs', 'submit', '-', '--json'], { stdin });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    const { error } = JSON.parse(result.stderr);
    expect(error.code).toBe('invalid_input');
    expect(error.message).toBe('standard input: line 1: content: required');
    expect(error.hint).toMatch(/^nothing was submitted\. .*pass --format text$/);
    expect(storedWithLabel('batch-first-')).toEqual([]);
    // The service received nothing of the batch.
    expect(requestCount(service) - before).toBe(0);
  });

  it('from standard input, the first of two bad lines is the one named', async () => {
    const before = requestCount(service);
    const result = await runCommand(service, ['docs', 'submit', '-', '--json'], { stdin: '{"a":1}\nplain words\n' });
    expect(result.code).toBe(2);
    const { error } = JSON.parse(result.stderr);
    expect(error.message).toMatch(/^standard input: line 1: /);
    expect(error.hint).toMatch(/^nothing was submitted\. .*pass --format text$/);
    expect(requestCount(service) - before).toBe(0);
  });

  it('terminal form: a progress bar on stderr, a table of results on stdout', async () => {
    const path = batchFile('tty.ndjson', 'g', [undefined, undefined]);
    const terminal = { stdoutIsTTY: true, stdinIsTTY: true };
    const { code, tc } = await runCommand(
      service,
      ['docs', 'submit', '--alias', 'ada-lovelace', '--file', path],
      terminal,
    );
    expect(code, tc.stderr()).toBe(0);
    const stdout = stripVTControlCharacters(tc.stdout());
    expect(stdout).toMatch(/LINE +DOCUMENT_ID +TOKEN_COUNT/);
    for (const doc of storedWithLabel('batch-g-')) expect(stdout).toContain(doc.id);
    expect(stripVTControlCharacters(tc.stderr())).toMatch(/Submitting .*2\/2/);
  });

  it('Ctrl-C stops new requests: exit 130, a summary, only part of the batch stored', async () => {
    const docs = Array.from({ length: 400 }, (_, i) => ({ label: `batch-h-${i}`, content: `h${i}` }));
    const path = file('long.ndjson', ndjson(docs));
    const tc = contextFor(service, { globals: { json: true } });
    const running = run(['docs', 'submit', '--alias', 'ada-lovelace', '--file', path, '--concurrency', '2'], tc.ctx);
    await eventually(() => (tc.stdout().includes('\n') ? true : undefined));
    tc.interrupt();
    const code = await running;
    await tc.close();
    expect(code).toBe(130);
    const done = tc.stdout().trimEnd().split('\n').length;
    expect(tc.stderr()).toMatch(new RegExp(`interrupted: ${done} of 400 documents were submitted`));
    expect(storedWithLabel('batch-h-').length).toBeLessThan(400);
    expect(storedWithLabel('batch-h-').length).toBeGreaterThanOrEqual(done);
  });
});
