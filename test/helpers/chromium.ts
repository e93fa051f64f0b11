import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium } from 'playwright-core';

/**
 * A headless Chromium for the consent-page tests, found without root and without apt, in this order:
 *   1. FACECTL_TEST_CHROMIUM: the path of a Chromium or Chrome executable;
 *   2. the Chromium that ships inside the @sparticuz/chromium dev dependency (Linux x64), unpacked once
 *      per clone into node_modules/.cache/facectl-chromium/<version>/ (about 3 s; later runs reuse it);
 *   3. a system Chromium or Chrome (/usr/bin/chromium and its usual neighbours).
 * Each launch gets a fresh profile directory and the flags that keep Chromium off the network.
 * playwright-core refuses --user-data-dir among launch() args, so the profile goes to
 * launchPersistentContext instead.
 */
export interface HeadlessBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SYSTEM_PATHS = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
];

/** True where the registry's Chromium runs, so a browser is always available there. */
export const BROWSER_GUARANTEED = process.platform === 'linux' && process.arch === 'x64';

let found: string | undefined;

/** The executable the browser tests use; throws, naming what was tried, when there is none. */
export function chromiumPath(): string {
  found ??= findChromium();
  return found;
}

function findChromium(): string {
  const fromEnv = process.env.FACECTL_TEST_CHROMIUM;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`FACECTL_TEST_CHROMIUM=${fromEnv}: no such file`);
    return fromEnv;
  }
  if (BROWSER_GUARANTEED) return unpackedRegistryChromium();
  const system = SYSTEM_PATHS.find((path) => existsSync(path));
  if (system) return system;
  throw new Error(
    `no Chromium: set FACECTL_TEST_CHROMIUM, or install Chromium/Chrome (tried ${SYSTEM_PATHS.join(', ')})`,
  );
}

/**
 * Unpacks @sparticuz/chromium into the clone's cache. The package unpacks into os.tmpdir(), shared by
 * every user and run, and checks only that the target exists (a half-written binary counts), so it is
 * run in a child whose TMPDIR is a fresh staging directory, and the finished directory is renamed into
 * place: two test files unpacking at once both finish, and one rename wins.
 */
function unpackedRegistryChromium(): string {
  const require = createRequire(join(ROOT, 'package.json'));
  const entry = require.resolve('@sparticuz/chromium');
  const pkgDir = join(dirname(entry), '..', '..');
  const pkgJson = join(pkgDir, 'package.json');
  const { version } = JSON.parse(readFileSync(pkgJson, 'utf8')) as { version: string };
  const cache = join(ROOT, 'node_modules', '.cache', 'facectl-chromium');
  const final = join(cache, version);
  const executable = join(final, 'chromium');
  if (existsSync(executable)) return executable;
  mkdirSync(cache, { recursive: true, mode: 0o700 });
  const staging = mkdtempSync(join(cache, `.staging-${version}-`));
  try {
    execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        // Resolved by the package's own exports from the clone's root (its file layout changes between versions).
        `const { default: c } = await import('@sparticuz/chromium'); await c.executablePath();`,
      ],
      { cwd: ROOT, env: { ...process.env, TMPDIR: staging }, stdio: ['ignore', 'pipe', 'inherit'], timeout: 120_000 },
    );
    if (!existsSync(join(staging, 'chromium'))) throw new Error(`@sparticuz/chromium did not unpack into ${staging}`);
    try {
      renameSync(staging, final);
    } catch (error) {
      // Another test file finished first: its copy is complete, ours is not needed.
      if (!existsSync(executable)) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return executable;
}

export async function launchChromium(): Promise<HeadlessBrowser> {
  const executablePath = chromiumPath();
  const profile = mkdtempSync(join(tmpdir(), 'facectl-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
      '--disable-quic',
      '--no-zygote',
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
