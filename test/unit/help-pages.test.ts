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

const livePaths = () => commandPaths(buildProgram(createTestContext().ctx));

describe('the help pages in dist/help.json', () => {
  let pages: Record<string, string>;
  beforeAll(() => {
    ensureBuilt();
    pages = JSON.parse(readFileSync(join(ROOT, 'dist', 'help.json'), 'utf8')) as Record<string, string>;
  }, 120_000);

  it('has a page for every command of the tree, and no other', () => {
    const paths = livePaths();
    expect(paths).toContain('');
    expect(paths).toContain('faces get');
    expect(paths).toContain('docs submit');
    expect(Object.keys(pages).sort()).toEqual([...paths].sort());
  });

  it('each page is exactly what commander prints for `facectl <command> --help`', async () => {
    for (const path of livePaths()) {
      const tc = createTestContext();
      expect(await run([...(path ? path.split(' ') : []), '--help'], tc.ctx)).toBe(0);
      expect(tc.stderr()).toBe('');
      expect({ path, page: pages[path] }).toEqual({ path, page: tc.stdout() });
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

  // The examples are not wrapped: measure the part commander lays out.
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
