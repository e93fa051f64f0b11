import { execFile } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import o200k from 'gpt-tokenizer/encoding/o200k_base';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/run-cli.js';
import { startServeProcess } from '../helpers/serve-process.js';
import { makeTempDir, tempFile } from '../helpers/temp.js';

/**
 * The package as users get it (issues 15 and 16): `npm pack` of a copy of the checkout (so the build it
 * runs never touches this checkout's dist/), `npm install -g` of the tarball into a temporary prefix,
 * the installed bin run (serve counting tokens with the bundled tokenizer included), `npx` of the
 * tarball, and `npm ci --omit=dev` in a clone. Neither pack nor install may print a warning of ours.
 */

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function npm(args: string[], cwd: string, env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      'npm',
      args,
      { cwd, env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024, timeout: 240_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/** npm's warnings, less the one this machine's own npmrc causes (not the package's doing). */
function warnings(output: string): string[] {
  return output
    .split('\n')
    .filter((line) => /\bwarn/i.test(line))
    .filter((line) => !/Unknown (user|project|global|env|builtin) config/.test(line));
}

const PACKED = ['bin', 'completions', 'scripts', 'src', 'package.json', 'package-lock.json', 'README.md', 'LICENSE'];

let work: string;
let tarball: string;
let packOutput: Run;
let packed: { size: number; unpackedSize: number; files: { path: string }[] };
let prefix: string;
let installOutput: Run;
let bin: string;

beforeAll(async () => {
  work = makeTempDir('facectl-pack-');
  const copy = join(work, 'checkout');
  for (const entry of [...PACKED, 'tsconfig.json', 'tsconfig.build.json']) {
    cpSync(join(ROOT, entry), join(copy, entry), { recursive: true });
  }
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
  packOutput = await npm(['pack', '--json', '--pack-destination', work], copy);
  expect(packOutput.stderr).not.toMatch(/ERR!/);
  const info = JSON.parse(packOutput.stdout.slice(packOutput.stdout.indexOf('['))) as (typeof packed & {
    filename: string;
  })[];
  packed = info[0] as typeof packed & { filename: string };
  tarball = join(work, (info[0] as { filename: string }).filename);
  prefix = join(work, 'prefix');
  installOutput = await npm(['install', '-g', '--prefix', prefix, tarball], work);
  bin = join(prefix, 'bin', 'facectl');
}, 600_000);

describe('npm pack', () => {
  it('prints no warning of ours', () => {
    expect(packOutput.code).toBe(0);
    expect(warnings(packOutput.stderr)).toEqual([]);
  });

  it('holds only what runs: bin, dist (no source maps), completions, README, LICENSE, package.json', () => {
    const paths = packed.files.map((file) => file.path).sort();
    for (const path of paths) {
      expect({
        path,
        ok: /^(bin|dist|completions)\//.test(path) || /^(README\.md|LICENSE|package\.json)$/.test(path),
      }).toEqual({ path, ok: true });
      expect(path).not.toMatch(/\.map$/);
    }
    expect(paths).toEqual(
      expect.arrayContaining([
        'LICENSE',
        'bin/facectl.js',
        'bin/package.json',
        'dist/cli.cjs',
        'dist/run.js',
        'dist/help.json',
        'dist/tokenizer.cjs',
        'dist/THIRD-PARTY-LICENSES.txt',
        'dist/types/index.d.ts',
      ]),
    );
    expect(readFileSync(join(ROOT, 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
  });

  it('docs/development.md states the tarball size and file count it has', () => {
    const page = readFileSync(join(ROOT, 'docs', 'development.md'), 'utf8');
    const stated = /tarball of about ([\d.]+) MB \((\d+) files/.exec(page);
    expect(stated).not.toBeNull();
    expect(Math.abs(Number(stated?.[1]) - packed.size / 1e6)).toBeLessThan(0.15);
    expect(Math.abs(Number(stated?.[2]) - packed.files.length)).toBeLessThanOrEqual(5);
  });
});

describe('npm install -g of the tarball', () => {
  it('carries the licenses of the code it bundles', () => {
    const licenses = readFileSync(
      join(prefix, 'lib', 'node_modules', 'facectl', 'dist', 'THIRD-PARTY-LICENSES.txt'),
      'utf8',
    );
    for (const bundled of ['undici', 'zod', 'gpt-tokenizer', 'commander', 'chalk', 'ora', 'cli-table3']) {
      expect(licenses).toMatch(new RegExp(`^${bundled}@\\d+\\.\\d+\\.\\d+ \\(MIT\\)$`, 'm'));
    }
    expect(licenses).not.toMatch(/^open@/m);
  });

  it('prints no warning of ours and installs open, jq-web and libsql alone beside facectl', () => {
    expect(installOutput.code).toBe(0);
    expect(warnings(installOutput.stderr)).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      scripts: Record<string, string>;
    };
    expect(Object.keys(manifest.dependencies)).toEqual(['jq-web', 'libsql', 'open']);
    expect(manifest.scripts.prepare).toBeUndefined();
    const installed = readdirSync(join(prefix, 'lib', 'node_modules', 'facectl', 'node_modules'));
    expect(installed).toContain('open');
    expect(installed).toContain('jq-web');
    // serve's SQLite driver, its prebuilt binaries beside it (optional packages, one per platform).
    expect(installed).toContain('libsql');
    expect(installed).toContain('@libsql');
    for (const bundled of ['undici', 'zod', 'gpt-tokenizer', 'commander']) expect(installed).not.toContain(bundled);
  });

  it('--jq runs from the installed package (jq-web found beside it, with its jq.wasm)', async () => {
    const filtered = await runBin(['openapi', '--jq', '.paths | keys | length > 10']);
    expect(filtered).toMatchObject({ code: 0, stdout: 'true\n', stderr: '' });
  });

  it('runs: --version, and serve counts tokens with the bundled tokenizer (inline and in a worker)', async () => {
    const version = await runBin(['--version']);
    expect(version).toMatchObject({ code: 0, stdout: `${manifestVersion()}\n`, stderr: '' });

    const serve = await startServeProcess([], [bin]);
    try {
      const env = serve.env();
      const face = await runBin(['api', '-X', 'POST', '/v1/faces', '-f', 'name=Pack Age', '-f', 'alias=pack-age'], env);
      expect(face).toMatchObject({ code: 0, stderr: '' });
      const submit = (label: string, content: string[]) =>
        runBin(
          ['api', '--raw', 'POST', '/v1/compile/documents', '-f', 'alias=pack-age', '-f', `label=${label}`, ...content],
          env,
        );
      const small = await submit('small', ['-f', 'content=hello world']);
      expect(small).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(small.stdout)).toMatchObject({ token_count: 2 });
      const text = 'hello world '.repeat(30_000);
      const large = await submit('large', ['-F', `content=@${tempFile('large.txt', text)}`]);
      expect(large).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(large.stdout)).toMatchObject({ token_count: o200k.countTokens(text) });
    } finally {
      await serve.kill();
    }
  });

  it('npx of the tarball runs the bin', async () => {
    const result = await npm(
      ['exec', '--yes', `--package=${tarball}`, '--', 'facectl', '--version'],
      makeTempDir('facectl-npx-'),
    );
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(manifestVersion());
    expect(warnings(result.stderr)).toEqual([]);
    // A full install of the dev dependencies: seconds on a quiet machine, over 30 s on a busy one.
  }, 240_000);
});

describe('a clone', () => {
  it('npm ci --omit=dev works (no prepare script needing the build tools)', async () => {
    const clone = makeTempDir('facectl-clone-');
    for (const entry of ['package.json', 'package-lock.json']) cpSync(join(ROOT, entry), join(clone, entry));
    const result = await npm(['ci', '--omit=dev'], clone);
    expect(result.stderr).not.toMatch(/ERR!/);
    expect(result.code).toBe(0);
    expect(existsSync(join(clone, 'node_modules', 'open'))).toBe(true);
    expect(existsSync(join(clone, 'node_modules', 'esbuild'))).toBe(false);
  });

  it('npm ci with the dev dependencies, as the Quick start runs it on Node 20, prints no warning', async () => {
    // An engine range that leaves out the Node that README supports (EBADENGINE), or an install script
    // nobody reviewed (npm's allowScripts), is a warning a newcomer would have to wonder about.
    const clone = makeTempDir('facectl-clone-dev-');
    for (const entry of ['package.json', 'package-lock.json']) cpSync(join(ROOT, entry), join(clone, entry));
    const result = await npm(['ci', '--no-audit', '--no-fund'], clone);
    expect(result.code, result.stderr).toBe(0);
    expect(warnings(result.stderr)).toEqual([]);
    // A full install of the dev dependencies: seconds on a quiet machine, over 30 s on a busy one.
  }, 240_000);
});

function manifestVersion(): string {
  return (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

function runBin(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      bin,
      args,
      {
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: makeTempDir('facectl-pkg-home-'),
          NO_COLOR: '1',
          ...env,
        },
        timeout: 60_000,
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
