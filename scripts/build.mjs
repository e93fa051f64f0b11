// Builds dist/ with esbuild: ESM, code splitting, so `facectl --version` loads only the small entry
// chunk and every command pulls in just the modules it uses (see README, "Performance"). Type
// declarations for the library entry points come from tsc.
import { execFileSync } from 'node:child_process';
import { renameSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const withTypes = !process.argv.includes('--no-types');

// Build beside dist/ and swap it in, so a test that is running the old bin never sees a half-built tree.
const staging = `dist.build-${process.pid}`;
rmSync(`${root}/${staging}`, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: { cli: 'src/cli.ts', index: 'src/index.ts', contract: 'src/contract/index.ts' },
  outdir: staging,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  sourcemap: 'linked',
  chunkNames: 'chunks/[name]-[hash]',
  // `open` finds its xdg-open script next to its own module, and gpt-tokenizer's vocabulary is large
  // data best loaded from its package as is: both stay external.
  external: ['open', 'gpt-tokenizer', 'gpt-tokenizer/*'],
  // Bundled CommonJS dependencies (cli-table3) need a require() in ESM output.
  banner: {
    js: "import { createRequire as __facectlRequire } from 'node:module'; const require = __facectlRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
if (withTypes) {
  execFileSync(
    process.execPath,
    [
      `${root}/node_modules/typescript/bin/tsc`,
      '-p',
      `${root}/tsconfig.build.json`,
      '--outDir',
      `${root}/${staging}/types`,
    ],
    { stdio: 'inherit' },
  );
}
const old = `${root}/dist.old-${process.pid}`;
try {
  renameSync(`${root}/dist`, old);
} catch {
  // first build: nothing to move aside
}
renameSync(`${root}/${staging}`, `${root}/dist`);
rmSync(old, { recursive: true, force: true });
