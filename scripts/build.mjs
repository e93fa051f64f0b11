// Builds dist/ with esbuild: ESM, code splitting, so every command pulls in just the modules it uses
// (see README, "Performance"). dist/cli.cjs, the process entry, is one file on its own: with the help
// pages rendered here into dist/help.json, `facectl --version` and `facectl --help` load nothing else.
// Type declarations for the library entry points come from tsc.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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
 * - undici's HTTP/1 client (loaded only through a proxy) requires its HTTP/2 client, which loads
 *   node:http2 and node:tls; facectl never negotiates HTTP/2 (no allowH2). `faces get` through a proxy
 *   (callgrind): 539 M instructions against 599 M without it on Node 20, 498 M against 627 M on Node 24.
 * - commander requires node:child_process for executable subcommands; facectl declares none. Every
 *   command: `faces get` 358 M against 361 M instructions on Node 20, 321 M against 323 M on Node 24.
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
 * `facectl serve` counts tokens with gpt-tokenizer's o200k_base encoding. It is built on its own into
 * dist/tokenizer.cjs (CommonJS, so the worker threads of service/tokens.ts can require it by path) and
 * src/service/tokenizer-path.ts is replaced by a function that finds it: serve works from the package
 * alone, and no other command ever reads those 2.4 MB.
 */
const tokenizerPath = {
  name: 'tokenizer-path',
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/]service[\\/]tokenizer-path\.ts$/ }, () => ({
      contents: `import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
export function tokenizerPath() {
  for (const relative of ['./tokenizer.cjs', '../tokenizer.cjs']) {
    const path = fileURLToPath(new URL(relative, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error('dist/tokenizer.cjs is missing: reinstall facectl');
}
`,
      loader: 'js',
    }));
  },
};

const withTypes = !process.argv.includes('--no-types');
// `--release` (npm pack, see prepack): no source maps, and the licenses of the bundled code beside it.
const release = process.argv.includes('--release');
const sourcemap = release ? false : 'linked';

// Build beside dist/ and swap it in, so a test that is running the old bin never sees a half-built tree.
const staging = `dist.build-${process.pid}`;
rmSync(`${root}/${staging}`, { recursive: true, force: true });
const common = {
  absWorkingDir: root,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  // `open` finds its xdg-open script next to its own module, jq-web (loaded only for --jq) its
  // jq.wasm next to its own, and libsql (loaded only by `facectl serve`) its native binary from the
  // package of the platform: they stay external, the runtime dependencies.
  external: ['open', 'jq-web', 'libsql'],
  // Bundled CommonJS dependencies (undici, cli-table3) need a require() in ESM output. Everything they
  // require that is not bundled is a Node built-in (test/e2e/startup.e2e.test.ts checks it), so this one
  // asks Node for built-ins only: a createRequire() in every chunk, as esbuild's usual banner has it, loads
  // node:module and builds a resolver per file (3 M instructions per API command).
  banner: {
    js: 'const require = (id) => process.getBuiltinModule(id) ?? (() => { throw new Error(`facectl: ${id} is not bundled`); })();',
  },
  plugins: [tokenizerPath, lazyRequires],
  logLevel: 'warning',
  // Less to read and parse at every start. Names are kept, so a stack trace under --debug still reads.
  // Row: one API command; on Node 20 without it 5.87x against 4.95x (3 rounds, loaded machine; earlier
  // runs were mixed), on Node 24 no difference. `npm run bench:tricks -- minify`.
  minifyWhitespace: true,
  minifySyntax: true,
};
const main = await build({
  ...common,
  entryPoints: { run: 'src/run.ts', index: 'src/index.ts', contract: 'src/contract/index.ts' },
  outdir: staging,
  splitting: true,
  sourcemap,
  metafile: true,
  chunkNames: 'chunks/[name]-[hash]',
});
// The tokenizer, required by path rather than imported (see tokenizerPath), CommonJS.
const byPath = await build({
  ...common,
  format: 'cjs',
  banner: {},
  splitting: false,
  metafile: true,
  sourcemap: false,
  minifyWhitespace: true,
  entryPoints: {
    tokenizer: 'node_modules/gpt-tokenizer/cjs/encoding/o200k_base.js',
  },
  outExtension: { '.js': '.cjs' },
  outdir: staging,
});
writeFileSync(`${root}/${staging}/THIRD-PARTY-LICENSES.txt`, thirdPartyLicenses([main.metafile, byPath.metafile]));

// The process entry, dist/cli.cjs, is one file apart from the split build: `--version` and `--help`
// then load nothing else (each further module file costs a start-up ~1 ms); it imports run.js for
// everything else. CommonJS, so that `--version` and `--help` are answered before Node starts its ES
// module loader (17 M instructions on Node 20, where `--version` then measured 1.33x `node -e 0`,
// against 1.11x without it; budget 1.3x).
await build({
  ...common,
  entryPoints: { cli: 'src/cli.ts' },
  format: 'cjs',
  outExtension: { '.js': '.cjs' },
  outdir: staging,
  sourcemap,
  external: [...common.external, './run.js'],
  define: { 'import.meta.dirname': '__dirname' },
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

/**
 * The license texts of every package whose code the bundle carries (from esbuild's metafiles): the
 * package ships them, since those packages are not installed beside it.
 */
function thirdPartyLicenses(metafiles) {
  const packages = new Map();
  for (const metafile of metafiles) {
    for (const input of Object.keys(metafile.inputs)) {
      const match = /^(?:[a-z-]+:)?(?:\.\/)?(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
      if (match) packages.set(match[1], true);
    }
  }
  const sections = [];
  for (const dir of [...packages.keys()].sort()) {
    const manifest = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'));
    const file = readdirSync(join(root, dir)).find((name) => /^(licen[cs]e|copying)(\.|$)/i.test(name));
    const text = file ? readFileSync(join(root, dir, file), 'utf8').trim() : `License: ${manifest.license}`;
    sections.push(`${manifest.name}@${manifest.version} (${manifest.license})\n\n${text}`);
  }
  const rule = `\n\n${'-'.repeat(72)}\n\n`;
  return `facectl bundles code of the following packages; their licenses follow.${rule}${sections.join(rule)}\n`;
}
