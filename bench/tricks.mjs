#!/usr/bin/env node
// `npm run bench:tricks -- [TRICK...]`: each performance trick measured with and without, against the
// budget rows it may serve (README, "Performance", the trick table; figures in bench/results/tricks.md).
//
// For each trick, two builds are made in temporary copies of the project: one as it is, one with the
// trick taken out by the edits listed below (each must match exactly once: when the code has moved on,
// the script says which edit no longer applies). bench/run.mjs then measures the trick's groups on each
// build (BENCH_CLI, BENCH_ONLY), alternately, --rounds times (default 1; the order flips every round),
// and the table gives the median of each row per side.
//
// Options: --node PATH (or BENCH_NODE) as for bench/run.mjs; --rounds N; --list. The BENCH_* settings
// of bench/run.mjs apply. Writes bench/results/tricks-node<major>.md (and .json).
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Every .ts file under a folder of src/, as an import specifier relative to src/run.ts. */
function modulesUnder(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
      found.push(
        `./${relative(join(root, 'src'), join(entry.parentPath ?? entry.path, entry.name)).replace(/\.ts$/, '.js')}`,
      );
    }
  }
  return found.sort();
}

/** What each trick is, which groups of bench/run.mjs it may affect, and the edits that remove it. */
const TRICKS = {
  'token-count': {
    what: "src/service/token-count.ts: serve's own scanner of gpt-tokenizer's split and vocabulary table",
    groups: 'bulk',
    edits: [
      {
        file: 'src/service/tokens.ts',
        from: 'const fast = makeFastCounter(encoding.bytePairEncodingCoreProcessor);',
        to: 'const fast = undefined as ReturnType<typeof makeFastCounter>;',
      },
    ],
  },
  'json-stream': {
    what: 'src/api/json-stream.ts, large-strings.ts: the echoed content of an answer read as a stream',
    groups: 'bigdoc',
    edits: [
      {
        file: 'src/api/transport.ts',
        from: 'if (exchange.largeStrings && ok &&',
        to: 'if (false && exchange.largeStrings && ok &&',
      },
    ],
  },
  'young-generation': {
    what: "src/api/bulk-v8.ts: V8's semi-space growth stopped at 8 MiB during a batch",
    groups: 'batch',
    edits: [
      {
        file: 'src/api/bulk-v8.ts',
        from: '  const limit = 2 * 8 * 1024 * 1024;',
        to: '  const limit = Number.POSITIVE_INFINITY;',
      },
    ],
  },
  'optimize-sooner': {
    what: "src/api/bulk-v8.ts: on Node 20, a batch and serve optimize their code after a third of V8's usual budget",
    groups: 'bulk',
    edits: [
      {
        file: 'src/api/bulk-v8.ts',
        from: '  if (Number.parseInt(process.versions.v8, 10) > 11) return;',
        to: '  return;',
      },
    ],
  },
  'node-http': {
    what: "src/api/node-http.ts: requests go through Node's own client, not an undici Pool (here: a Pool, as before)",
    groups: 'api,bulk',
    edits: [
      {
        file: 'src/api/transport.ts',
        from: '      : Promise.resolve(new NodeHttpClient(options.baseUrl, this.limits));',
        to: `      : Promise.all([import('undici/lib/dispatcher/pool.js'), import('undici/lib/api/api-request.js')]).then(
          ([{ default: Pool }, { default: request }]) => {
            const pool = new Pool(this.origin, { headersTimeout: this.limits.headersMs, bodyTimeout: this.limits.bodyMs,
              keepAliveTimeout: 10_000, connections: 64, pipelining: 1, connect: { timeout: this.limits.connectMs } });
            return {
              send: async ({ origin, path, method, headers, body, signal }) => {
                const answer = await request.call(pool, { origin, path, method, headers, body, signal });
                return { statusCode: answer.statusCode, headers: answer.headers, body: answer.body };
              },
              destroy: (reason) => void pool.destroy(reason).catch(() => undefined),
              close: () => pool.close(),
            };
          });`,
      },
    ],
  },
  'lazy-requires': {
    what: "scripts/build.mjs lazyRequires: undici's HTTP/2 client and commander's node:child_process required on first use",
    groups: 'api',
    edits: [
      { file: 'scripts/build.mjs', from: 'plugins: [tokenizerPath, lazyRequires, ', to: 'plugins: [tokenizerPath, ' },
    ],
  },
  minify: {
    what: 'scripts/build.mjs minifyWhitespace and minifySyntax',
    groups: 'startup,api',
    edits: [{ file: 'scripts/build.mjs', from: '  minifyWhitespace: true,\n  minifySyntax: true,\n', to: '' }],
  },
  'help-pages': {
    what: 'src/cli.ts: --version and prerendered --help answered without loading run.js and commander',
    groups: 'startup',
    edits: [
      {
        file: 'src/cli.ts',
        from: '  const argv = process.argv.slice(2);\n',
        to: "  const argv = process.argv.slice(2);\n  if (argv.length > 0) return (await import('./run.js')).runProcess(argv);\n",
      },
    ],
  },
  'lazy-actions': {
    what: 'lazy import() of what verbs run (contract, client, input readers) and of the config store: here every one imported at start',
    groups: 'api',
    edits: [
      {
        file: 'src/run.ts',
        from: 'export async function runProcess(argv: string[]): Promise<number> {\n',
        to: () =>
          `export async function runProcess(argv: string[]): Promise<number> {\n  await Promise.all([${[
            ...modulesUnder(join(root, 'src', 'commands')),
            ...modulesUnder(join(root, 'src', 'config')),
          ]
            .map((m) => `import(${JSON.stringify(m)})`)
            .join(', ')}]);\n`,
      },
    ],
  },
};

const argv = process.argv.slice(2);
const option = (name) => {
  const i = argv.indexOf(name);
  if (i < 0) return undefined;
  const [, value] = argv.splice(i, 2);
  return value;
};
const NODE = option('--node') ?? process.env.BENCH_NODE ?? process.execPath;
const ROUNDS = Number(option('--rounds') ?? 1);
if (argv.includes('--list')) {
  for (const [name, t] of Object.entries(TRICKS)) console.log(`${name.padEnd(20)} ${t.groups.padEnd(12)} ${t.what}`);
  process.exit(0);
}
const chosen = argv.length > 0 ? argv : Object.keys(TRICKS);
for (const name of chosen) if (!TRICKS[name]) throw new Error(`unknown trick ${name} (--list names them)`);

const tmp = mkdtempSync(join(tmpdir(), 'facectl-tricks-'));
const log = (line) => process.stderr.write(`tricks: ${line}\n`);

/** A copy of the project's sources with the edits made, built (no type declarations); its bin path. */
function buildCopy(label, edits) {
  const dir = join(tmp, label);
  mkdirSync(dir);
  for (const entry of ['src', 'scripts', 'bin', 'bench'])
    cpSync(join(root, entry), join(dir, entry), { recursive: true });
  for (const file of readdirSync(root)) if (file.endsWith('.json')) cpSync(join(root, file), join(dir, file));
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  for (const edit of edits) {
    const path = join(dir, edit.file);
    const text = readFileSync(path, 'utf8');
    const count = text.split(edit.from).length - 1;
    if (count !== 1)
      throw new Error(
        `${label}: ${edit.file} holds ${count} copies of ${JSON.stringify(edit.from)}: update bench/tricks.mjs`,
      );
    writeFileSync(path, text.replace(edit.from, typeof edit.to === 'function' ? edit.to() : edit.to));
  }
  execFileSync(process.execPath, [join(dir, 'scripts', 'build.mjs'), '--no-types'], { cwd: dir, stdio: 'inherit' });
  return join(dir, 'bin', 'facectl.js');
}

/** One bench/run.mjs run of `groups` on one build; its rows. */
function bench(cli, groups, env, label) {
  const out = join(tmp, `out-${label}`);
  log(`${label}: BENCH_ONLY=${groups}`);
  const r = spawnSync(process.execPath, [join(root, 'bench', 'run.mjs'), '--node', NODE], {
    env: { ...process.env, ...env, BENCH_CLI: cli, BENCH_ONLY: groups, BENCH_OUT: out },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (r.status !== 0) throw new Error(`bench/run.mjs exited ${r.status}`);
  const file = readdirSync(out).find((f) => f.endsWith('.json'));
  const rows = JSON.parse(readFileSync(join(out, file), 'utf8')).rows;
  rmSync(out, { recursive: true, force: true });
  return rows;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
/** A row's figures (its ratio, its peak in MiB), medians over the runs, as text. */
function summary(rows) {
  const numbers = (key) => rows.map((r) => r[key]).filter((x) => typeof x === 'number');
  const parts = [];
  if (numbers('ratio').length > 0) parts.push(`${median(numbers('ratio')).toFixed(2)}x`);
  if (numbers('mib').length > 0) parts.push(`${median(numbers('mib')).toFixed(1)} MiB`);
  return parts.length > 0 ? parts.join(', ') : (rows[0]?.value ?? rows[0]?.note ?? '—');
}

const nodeVersion = execFileSync(NODE, ['--version'], { encoding: 'utf8' }).trim();
const results = [];
try {
  const withCli = buildCopy('with', []);
  for (const name of chosen) {
    const trick = TRICKS[name];
    const withoutCli = trick.edits.length > 0 ? buildCopy(`without-${name}`, trick.edits) : withCli;
    const runs = { with: [], without: [] };
    for (let i = 0; i < ROUNDS; i++) {
      const sides = ['with', 'without'];
      for (const side of i % 2 === 0 ? sides : sides.reverse()) {
        const rows =
          side === 'with'
            ? bench(withCli, trick.groups, {}, `${name}-with-${i}`)
            : bench(withoutCli, trick.groups, trick.env ?? {}, `${name}-without-${i}`);
        runs[side].push(rows);
      }
    }
    for (const r of runs.with[0]) {
      const values = (side) => runs[side].map((rows) => rows.find((x) => x.name === r.name)).filter(Boolean);
      const w = values('with');
      const wo = values('without');
      results.push({
        trick: name,
        row: r.name,
        budget: r.budget,
        with: summary(w),
        without: summary(wo),
        withRuns: w.map((x) => x.value ?? x.note),
        withoutRuns: wo.map((x) => x.value ?? x.note),
        verdictWith: w.map((x) => x.verdict).join(' '),
        verdictWithout: wo.map((x) => x.verdict).join(' '),
      });
      const last = results.at(-1);
      log(`${name} | ${r.name}: with ${last.with}, without ${last.without} (${last.verdictWithout})`);
    }
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

const major = nodeVersion.replace(/^v/, '').split('.')[0];
const md = [
  `Tricks, ${new Date().toISOString().slice(0, 10)}, Node ${nodeVersion}, ${ROUNDS} round(s) (medians)`,
  '',
  '| trick | row | budget | with | without | verdicts with / without |',
  '|---|---|---|---|---|---|',
  ...results.map(
    (r) =>
      `| ${r.trick} | ${r.row} | ${r.budget} | ${r.with} | ${r.without} | ${r.verdictWith} / ${r.verdictWithout} |`,
  ),
  '',
].join('\n');
console.log(md);
const outDir = process.env.BENCH_OUT ?? join(root, 'bench', 'results');
mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, `tricks-node${major}.md`), md);
writeFileSync(
  join(outDir, `tricks-node${major}.json`),
  `${JSON.stringify({ node: nodeVersion, rounds: ROUNDS, results }, null, 2)}\n`,
);
