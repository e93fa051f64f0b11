// Builds dist/ with esbuild: ESM, code splitting, so every command pulls in just the modules it uses
// (see README, "Performance"). dist/cli.js, the process entry, is one file on its own: with the help
// pages rendered here into dist/help.json, `facectl --version` and `facectl --help` load nothing else.
// Type declarations for the library entry points come from tsc.
import { execFileSync } from 'node:child_process';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Resolves each listed `request` made by a module matching its `importer`; other requires are left alone. */
function onRequires(b, list, resolve) {
  for (const { importer, request } of list) {
    const filter = new RegExp(`^${request.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`);
    b.onResolve({ filter }, (args) => (importer.test(args.importer) ? resolve(request, args) : undefined));
  }
}

/**
 * Two requires made at load time for features facectl never uses become lazy: the module is required
 * the first time it is actually used, so each start saves what loading it costs.
 * - undici's HTTP/1 client requires its HTTP/2 client, which loads node:http2 and node:tls (3 to 15 ms
 *   at every API command); facectl never negotiates HTTP/2 (no allowH2).
 * - commander requires node:child_process (~1 ms) for executable subcommands; facectl declares none.
 * Should either package change the require, the filter stops matching and the bundle is as before.
 */
const LAZY_REQUIRES = [
  { importer: /[\\/]undici[\\/]lib[\\/]dispatcher[\\/]client\.js$/, request: './client-h2.js' },
  { importer: /[\\/]commander[\\/]lib[\\/]command\.js$/, request: 'node:child_process' },
];
const lazyRequires = {
  name: 'lazy-requires',
  setup(b) {
    onRequires(b, LAZY_REQUIRES, (request, args) => {
      // A file by its path from the root (resolveDir below), so no absolute path lands in dist/.
      const file = () =>
        relative(root, join(dirname(args.importer), request))
          .split(sep)
          .join('/');
      return { path: request.startsWith('.') ? `./${file()}` : request, namespace: 'lazy-require' };
    });
    // A stand-in that requires the real module on first use: called (a function export) or read from.
    b.onLoad({ filter: /.*/, namespace: 'lazy-require' }, (args) => ({
      contents: `let loaded;
const load = () => (loaded ??= require(${JSON.stringify(args.path)}));
module.exports = new Proxy(function lazy() {}, {
  apply: (_target, self, params) => Reflect.apply(load(), self, params),
  get: (_target, key) => load()[key],
  has: (_target, key) => key in load(),
});
`,
      resolveDir: root,
      loader: 'js',
    }));
  },
};
/**
 * Modules undici requires only inside a branch facectl never takes are left out of the bundle and
 * required from node_modules if that branch ever runs: the fetch body extractor (for FormData bodies)
 * and the llhttp parser built without SIMD (the fallback where WebAssembly SIMD is missing). Bundled,
 * their ~200 KB are read and parsed at every API command's start although they never run.
 */
const RUNTIME_REQUIRES = [
  { importer: /[\\/]undici[\\/]lib[\\/]dispatcher[\\/]client-h[12]\.js$/, request: '../web/fetch/body.js' },
  { importer: /[\\/]undici[\\/]lib[\\/]dispatcher[\\/]client-h1\.js$/, request: '../llhttp/llhttp-wasm.js' },
];
const runtimeRequires = {
  name: 'runtime-requires',
  setup(b) {
    onRequires(b, RUNTIME_REQUIRES, (request, args) => {
      // By package name, so the require resolves from dist/ through node_modules as any dependency does.
      const path = relative(join(root, 'node_modules'), join(dirname(args.importer), request))
        .split(sep)
        .join('/');
      return { path, external: true };
    });
  },
};
const withTypes = !process.argv.includes('--no-types');

// Build beside dist/ and swap it in, so a test that is running the old bin never sees a half-built tree.
const staging = `dist.build-${process.pid}`;
rmSync(`${root}/${staging}`, { recursive: true, force: true });
const common = {
  absWorkingDir: root,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  // `open` finds its xdg-open script next to its own module, gpt-tokenizer's vocabulary is large
  // data best loaded from its package as is, and jq-web loads its jq.wasm from beside its own file:
  // all three stay external.
  external: ['open', 'gpt-tokenizer', 'gpt-tokenizer/*', 'jq-web'],
  // Bundled CommonJS dependencies (cli-table3) need a require() in ESM output.
  banner: {
    js: "import { createRequire as __facectlRequire } from 'node:module'; const require = __facectlRequire(import.meta.url);",
  },
  plugins: [lazyRequires, runtimeRequires],
  logLevel: 'warning',
  // Less to read and parse at every start. Names are kept, so a stack trace under --debug still reads.
  minifyWhitespace: true,
  minifySyntax: true,
};
await build({
  ...common,
  entryPoints: { run: 'src/run.ts', index: 'src/index.ts', contract: 'src/contract/index.ts' },
  outdir: staging,
  splitting: true,
  sourcemap: 'linked',
  chunkNames: 'chunks/[name]-[hash]',
});
// The process entry is one file apart from the split build: `--version` and `--help` then load
// nothing else (each further module file costs a start-up ~1 ms). It reaches the rest through run.js.
await build({
  ...common,
  entryPoints: { cli: 'src/cli.ts' },
  outdir: staging,
  sourcemap: 'linked',
  external: [...common.external, './run.js'],
  banner: {},
});

// Every `--help` page, rendered by commander from the command tree just built, for cli.ts to print
// without loading commander (test/unit/help-pages.test.ts checks them against the live output).
const generator = `${root}/${staging}/help-pages.mjs`;
await build({ ...common, entryPoints: ['src/help-pages.ts'], outfile: generator });
const { renderHelpPages } = await import(pathToFileURL(generator).href);
writeFileSync(`${root}/${staging}/help.json`, `${JSON.stringify(await renderHelpPages())}\n`);
rmSync(generator);

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
