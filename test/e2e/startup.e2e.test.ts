import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import module from 'node:module';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderHelpPage } from '../../src/help-pages.js';
import { BIN, makeConfigDir, ROOT, runCli } from '../helpers/run-cli.js';
import { useServe } from '../helpers/hooks.js';
import { tracing, traced } from '../helpers/module-trace.js';
import { watchChild } from '../helpers/watch-child.js';

/**
 * What the built bin loads at start: `--help` answered from the pages made at build time (and the same
 * text commander prints), an API command with FACECTL_API_KEY without the renderers, the prompts, the
 * config store or node:http2, and nothing written to the user's cache directory.
 */

const serve = useServe();

describe('--help', () => {
  it.each([[['--help']], [['-h']], [['faces', '--help']], [['faces', 'get', '--help']], [['docs', 'submit', '-h']]])(
    '%j prints commander’s page and loads nothing but dist/cli.cjs',
    async (argv) => {
      const result = await runCli(argv, { env: tracing() });
      const { files, builtins, rest } = traced(result.stderr);
      expect(rest).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toBe(await renderHelpPage(argv.slice(0, -1).join(' ')));
      expect(files).toEqual([BIN, join(ROOT, 'dist', 'cli.cjs')]);
      expect(builtins).not.toContain('child_process');
    },
  );

  it('a line commander must answer still gets its page from commander', async () => {
    const result = await runCli(['faces', 'get', 'ada', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(await renderHelpPage('faces get'));
  });

  it('| head: the reader leaving early is a quiet exit', async () => {
    const child = spawn(process.execPath, [BIN, '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const run = watchChild(child);
    child.stdout.destroy();
    const { code } = await run.exit;
    expect(run.stderr()).toBe('');
    expect(code).toBe(0);
  });
});

describe('an API command with the key in FACECTL_API_KEY', () => {
  it('faces get --json loads the client and the contract, not undici, the renderers, prompts, config store or http2', async () => {
    const env = serve.env();
    const created = await runCli(['faces', 'create', '--name', 'Start Up', '--alias', 'start-up', '--json'], { env });
    expect(created.code).toBe(0);

    const configDir = makeConfigDir();
    const result = await runCli(['faces', 'get', 'start-up', '--json'], {
      env: { ...env, ...tracing(), FACECTL_CONFIG_DIR: configDir },
    });
    const { files, builtins, rest } = traced(result.stderr);
    expect(rest).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ alias: 'start-up', name: 'Start Up' });

    // The bundle is minified: which sources a loaded file holds is read from its source map.
    const sources = files
      .filter((file) => file.includes(`${sep}dist${sep}`))
      .flatMap((file) => {
        const map = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] };
        return map.sources.map((source) => source.replace(/^(\.\.\/)+/, ''));
      });
    expect(sources.some((source) => source.startsWith('node_modules/zod/'))).toBe(true);
    // Requests go through Node's own client (src/api/node-http.ts): undici loads only through a proxy.
    expect(sources).toContain('src/api/node-http.ts');
    expect(sources.filter((source) => source.startsWith('node_modules/undici/'))).toEqual([]);
    // serve's SQLite driver (a native module outside dist/) is never loaded by an API command.
    expect(files.filter((file) => file.includes(`${sep}libsql${sep}`))).toEqual([]);
    for (const unused of ['conf', 'ajv', 'ora', 'chalk', 'cli-table3', '@inquirer', 'open']) {
      const loaded = sources.some((source) => source.startsWith(`node_modules/${unused}/`));
      expect({ unused, loaded }).toEqual({ unused, loaded: false });
    }
    // zod's locales and JSON-schema importer are not part of what the contract uses.
    expect(sources).not.toContain('node_modules/zod/v4/locales/de.js');
    expect(builtins).toContain('http');
    expect(builtins).not.toContain('http2');
    expect(existsSync(join(configDir, 'config.json'))).toBe(false);
  });
});

describe('nothing is left to node_modules but `open`', () => {
  it('dist/ requires no package at run time: undici is bundled whole', () => {
    const files = [join(ROOT, 'dist', 'run.js'), join(ROOT, 'dist', 'index.js')];
    const chunks = join(ROOT, 'dist', 'chunks');
    for (const name of readdirSync(chunks).filter((file) => file.endsWith('.js'))) files.push(join(chunks, name));
    const required = new Set<string>();
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(/__require\("([^"]+)"\)|\bimport\("([^"./][^"]*)"\)/g)) {
        const name = (match[1] ?? match[2]) as string;
        // node:sqlite (undici's cache store, never used here) is no built-in on Node 20, but no package either.
        if (!name.startsWith('node:') && !module.isBuiltin(name)) required.add(name);
      }
    }
    expect([...required].sort()).toEqual(['open']);
  });
});

describe('--version', () => {
  it('prints the version, and under --json one JSON document with it', async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(await runCli(['--version'])).toMatchObject({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
    for (const argv of [
      ['--version', '--json'],
      ['--json', '-V'],
    ]) {
      const result = await runCli(argv);
      expect({ argv, code: result.code, stderr: result.stderr }).toEqual({ argv, code: 0, stderr: '' });
      expect(JSON.parse(result.stdout)).toEqual({ version: pkg.version });
    }
  });
});

describe('the user cache directory', () => {
  // bin/facectl.js once turned on V8's compile cache there (Node 22+); measured of no use to any budget,
  // it was removed: facectl writes nothing to a cache directory.
  it('is left alone: no facectl directory is made in it', async () => {
    const cacheHome = mkdtempSync(join(tmpdir(), 'facectl-cache-'));
    try {
      for (const argv of [['--version'], ['faces', '--help'], ['openapi']]) {
        const result = await runCli(argv, { env: { XDG_CACHE_HOME: cacheHome } });
        expect({ argv, code: result.code }).toEqual({ argv, code: 0 });
      }
      expect(readdirSync(cacheHome)).toEqual([]);
    } finally {
      rmSync(cacheHome, { recursive: true, force: true });
    }
  });
});
