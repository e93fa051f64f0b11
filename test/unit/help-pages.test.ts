import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { prerenderedHelp } from '../../src/cli.js';
import { commandPaths, renderHelpPage } from '../../src/help-pages.js';
import { run } from '../../src/main.js';
import { buildProgram } from '../../src/program.js';
import { ROOT } from '../helpers/run-cli.js';
import { ensureBuilt } from '../helpers/serve-process.js';
import { createTestContext } from '../helpers/test-context.js';

/**
 * `facectl [command] --help` is answered from dist/help.json, which the build renders from the command
 * tree. These tests hold those pages to commander's live output, command by command, and check when
 * cli.ts may use them (only where commander would wrap to the same 80 columns).
 */

const livePaths = async () => commandPaths(await buildProgram(createTestContext().ctx));

describe('the help pages in dist/help.json', () => {
  let pages: Record<string, string>;
  beforeAll(() => {
    ensureBuilt();
    pages = JSON.parse(readFileSync(join(ROOT, 'dist', 'help.json'), 'utf8')) as Record<string, string>;
  }, 120_000);

  it('has a page for every command of the tree, and no other', async () => {
    const paths = await livePaths();
    expect(paths).toContain('');
    expect(paths).toContain('faces get');
    expect(paths).toContain('docs submit');
    expect(Object.keys(pages).sort()).toEqual([...paths].sort());
  });

  it('each page is exactly what commander prints for `facectl <command> --help`', async () => {
    for (const path of await livePaths()) {
      const tc = createTestContext();
      expect(await run([...(path ? path.split(' ') : []), '--help'], tc.ctx)).toBe(0);
      expect(tc.stderr()).toBe('');
      expect({ path, page: pages[path] }).toEqual({ path, page: tc.stdout() });
    }
  });

  it('no page writes a plural as "(s)" (http(s) is a scheme, not a plural)', () => {
    for (const [path, page] of Object.entries(pages)) {
      expect({ path, plurals: page.match(/(?<!http)\(s\)/g) }).toEqual({ path, plurals: null });
    }
  });

  it('renderHelpPage (what the build calls) gives the live output', async () => {
    const tc = createTestContext();
    expect(await run(['docs', 'submit', '--help'], tc.ctx)).toBe(0);
    expect(await renderHelpPage('docs submit')).toBe(tc.stdout());
    expect(tc.stdout()).toContain('--resume');
  });
});

describe('when cli.ts answers --help itself', () => {
  const pages = { '': 'program page\n', faces: 'faces page\n', 'faces get': 'faces get page\n' };
  const load = () => pages;
  const pipe = { isTTY: false };

  it('for --help or -h after the exact words of a command', () => {
    expect(prerenderedHelp(['--help'], pipe, load)).toBe('program page\n');
    expect(prerenderedHelp(['-h'], pipe, load)).toBe('program page\n');
    expect(prerenderedHelp(['faces', '--help'], pipe, load)).toBe('faces page\n');
    expect(prerenderedHelp(['faces', 'get', '-h'], pipe, load)).toBe('faces get page\n');
  });

  it('not for other lines: commander answers those', () => {
    for (const argv of [
      [],
      ['faces'],
      ['--help', 'faces'],
      ['faces', 'get', 'ada', '--help'],
      ['faces', 'nope', '--help'],
      ['--json', '--help'],
      ['faces', '--debug', '--help'],
      ['help', 'faces'],
      ['constructor', '--help'],
      ['__proto__', '--help'],
      ['--version'],
    ]) {
      expect({ argv, page: prerenderedHelp(argv, pipe, load) }).toEqual({ argv, page: undefined });
    }
  });

  it('on a terminal only when it is 80 columns wide (or does not say)', () => {
    expect(prerenderedHelp(['--help'], { isTTY: true, columns: 80 }, load)).toBe('program page\n');
    expect(prerenderedHelp(['--help'], { isTTY: true }, load)).toBe('program page\n');
    expect(prerenderedHelp(['--help'], { isTTY: true, columns: 120 }, load)).toBeUndefined();
    expect(prerenderedHelp(['--help'], { isTTY: true, columns: 40 }, load)).toBeUndefined();
    expect(prerenderedHelp(['--help'], { isTTY: true, columns: 0 }, load)).toBeUndefined();
    // A pipe's size does not matter: commander wraps to 80 there.
    expect(prerenderedHelp(['--help'], { isTTY: false, columns: 120 }, load)).toBe('program page\n');
  });

  it('not when the pages are missing or unreadable (running from the sources)', () => {
    const missing = () => {
      throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
    };
    expect(prerenderedHelp(['--help'], pipe, missing)).toBeUndefined();
    expect(prerenderedHelp(['--help'], pipe, () => null)).toBeUndefined();
    expect(prerenderedHelp(['--help'], pipe, () => ({ '': 42 }))).toBeUndefined();
    expect(prerenderedHelp(['--help'], pipe)).toBeUndefined();
  });
});

describe('commander wraps help to the context stream', () => {
  const facesHelp = async (stdoutIsTTY: boolean, columns: number | undefined) => {
    const tc = createTestContext({ stdoutIsTTY });
    (tc.ctx.io.stdout as { columns?: number }).columns = columns;
    expect(await run(['import', '--help'], tc.ctx)).toBe(0);
    return tc.stdout();
  };

  // The examples are not wrapped: measure the part before them.
  const widest = (page: string) => Math.max(...(page.split('Examples:')[0] ?? '').split('\n').map((l) => l.length));

  it('80 columns unless stdout is a terminal of another width', async () => {
    const pipe = await facesHelp(false, 200);
    expect(await facesHelp(true, undefined)).toBe(pipe);
    expect(await facesHelp(true, 80)).toBe(pipe);
    expect(widest(pipe)).toBeLessThanOrEqual(80);
    const wide = await facesHelp(true, 200);
    expect(wide).not.toBe(pipe);
    expect(widest(wide)).toBeGreaterThan(80);
  });
});

describe("help pages: commander's layout, in flags (issue 12 items 3 and 4)", () => {
  const page = async (argv: string[], options: { columns?: number } = {}) => {
    const tc = createTestContext({ stdoutIsTTY: options.columns !== undefined });
    (tc.ctx.io.stdout as { columns?: number }).columns = options.columns;
    const code = await run(argv, tc.ctx);
    return { code, stdout: tc.stdout(), stderr: tc.stderr() };
  };

  it('every page has its usage in flags, global flags (below the top), examples and no quoted default', async () => {
    for (const path of await livePaths()) {
      const { stdout } = await page([...(path ? path.split(' ') : []), '--help']);
      const has = (title: string) => stdout.includes(`\n${title}\n`);
      expect(stdout).toMatch(new RegExp(`^Usage: facectl${path ? ` ${path}` : ''} \\[flags\\]`));
      expect({ path, examples: has('Examples:') }).toEqual({ path, examples: true });
      if (path !== '') expect({ path, inherited: has('Global flags:') }).toEqual({ path, inherited: true });
      expect(stdout).toMatch(/\n {2}\$ facectl /);
      expect(stdout).not.toMatch(/\(default: "|\[options\]/);
    }
  });

  it('global flags are listed apart from the own flags on a subcommand page', async () => {
    const { stdout } = await page(['docs', 'submit', '--help']);
    const [own, inherited] = stdout.split('Global flags:');
    expect(own).toContain('--concurrency <n>');
    expect(own).toMatch(/\(1 to 64;\s+default:\s+4\)/);
    expect(own).toMatch(/\(one of: first-person,\s+third-person\)/);
    expect(own).toContain('-h, --help');
    expect(own).not.toContain('--base-url');
    expect(inherited).toContain('--base-url <url>');
    expect(inherited).toContain('--json');
  });

  it('group pages list their commands and show examples', async () => {
    for (const group of ['keys', 'faces', 'docs', 'threads', 'oauth', 'auth', 'config']) {
      const { stdout } = await page([group, '--help']);
      expect(stdout).toContain('\nCommands:\n');
      expect(stdout).toMatch(new RegExp(`Examples:\\n {2}\\$ facectl ${group} `));
    }
  });

  it('prose is wrapped to 80 columns when not a terminal, to the terminal width on one', async () => {
    const widest = (text: string) =>
      Math.max(...(text.split('Examples:')[0] ?? '').split('\n').map((line) => line.length));
    for (const path of ['threads', 'doctor', 'auth', 'auth status', 'auth login']) {
      const piped = await page([...path.split(' '), '--help']);
      expect({ path, widest: widest(piped.stdout) <= 80 }).toEqual({ path, widest: true });
      const narrow = await page([...path.split(' '), '--help'], { columns: 60 });
      expect({ path, widest: widest(narrow.stdout) <= 60 }).toEqual({ path, widest: true });
    }
    // At 40 columns, pages of long flags (a ring's find: their rows ran on past the edge): each description under
    // its term. Only the usage line and a word longer than the room (a URL) may be wider.
    for (const path of ['docs submit', 'threads create', 'keys create', 'docs sync']) {
      const { stdout } = await page([...path.split(' '), '--help'], { columns: 40 });
      const body = (stdout.split('Examples:')[0] ?? '').split('\n').slice(1);
      const wide = body.filter((line) => line.length > 40 && /\S\s+\S/.test(line.trim()));
      expect({ path, wide }).toEqual({ path, wide: [] });
      expect(stdout).toMatch(/\n {2}--json\n {6}print one JSON document/);
    }
  });

  it('a sentence is not broken by the description source: doctor reads as reflowed paragraphs', async () => {
    const { stdout } = await page(['doctor', '--help']);
    const first = stdout.split('\n\n')[1] ?? '';
    // Every line but the last of the paragraph is filled: no short line in the middle of a sentence.
    const lines = first.split('\n');
    for (const line of lines.slice(0, -1)) expect(line.length).toBeGreaterThan(60);
  });

  it('`facectl help A B` prints exactly what `facectl A B --help` prints', async () => {
    for (const path of ['docs submit', 'threads get', 'faces', 'auth status']) {
      const viaHelp = await page(['help', ...path.split(' ')]);
      const viaFlag = await page([...path.split(' '), '--help']);
      expect(viaHelp.code).toBe(0);
      expect({ path, page: viaHelp.stdout }).toEqual({ path, page: viaFlag.stdout });
    }
  });

  it('an unknown topic is a usage error (exit 2) with a suggestion, nothing on stdout', async () => {
    const nosuch = await page(['help', 'nosuch']);
    expect(nosuch.code).toBe(2);
    expect(nosuch.stdout).toBe('');
    expect(nosuch.stderr).toContain('error: unknown help topic "nosuch"');
    const typo = await page(['help', 'docs', 'sbumit']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('did you mean `facectl help docs submit`?');
  });

  it('bare `facectl` prints the top-level help on stdout and exits 0', async () => {
    const bare = await page([]);
    expect(bare.code).toBe(0);
    expect(bare.stderr).toBe('');
    expect(bare.stdout).toBe((await page(['--help'])).stdout);
    expect(bare.stdout).toContain('\nCommands:\n');
  });
});
