#!/usr/bin/env node
// `npm run bench`: the budgets of docs/performance.md, each measured as a ratio against a baseline run
// alternately in the same run (these machines are shared and noisy), medians of several runs.
//
// Options: --node PATH (or BENCH_NODE): the Node binary for the CLI, the service and every baseline.
//          --baseline DIR (or BENCH_BASELINE): a build of commit d245c82 (`node bench/baseline.mjs DIR`
//                   makes one) for the row that times one API command against it; without one the
//                   row says "not available".
//          --docs: also put the tables of bench/results/node<major>.md into docs/performance.md.
// Environment (defaults take a few minutes on 2 cores):
//   BENCH_START_RUNS=15  runs of each start-up row (each side)
//   BENCH_BULK_RUNS=8    runs of the bulk rows (each side on a fresh service of its own; even, so each
//                        side goes first equally often)
//   BENCH_BULK_DOCS=5000 documents of ~2 KB in the bulk rows
//   BENCH_BIG_MIB=50     size of the large single document
//   BENCH_BATCH_MIB=1024 size of the large NDJSON batch (compared with BENCH_BATCH_SMALL_MIB=256)
//   BENCH_BATCH_RUNS=2   runs of each batch size (alternating; the row compares medians)
//   BENCH_ONLY=startup,api,jq,bulk,service,bigdoc,batch  a subset of the groups
//   BENCH_CLI=PATH       another build's bin/facectl.js to measure (bench/tricks.mjs: a build without a trick)
//   BENCH_OUT=DIR        where the results go (default bench/results)
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  api,
  findTime,
  machine,
  median,
  peakRss,
  processCpuSeconds,
  run,
  startServer,
  writeNdjson,
  writeText,
} from './lib/util.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const nodeFlag = argv.indexOf('--node');
const NODE = (nodeFlag >= 0 ? argv[nodeFlag + 1] : undefined) ?? process.env.BENCH_NODE ?? process.execPath;
const baselineFlag = argv.indexOf('--baseline');
const BASELINE = (baselineFlag >= 0 ? argv[baselineFlag + 1] : undefined) ?? process.env.BENCH_BASELINE;
const num = (name, dflt) => Number(process.env[name] ?? dflt);
const START_RUNS = num('BENCH_START_RUNS', 15);
const BULK_RUNS = num('BENCH_BULK_RUNS', 8);
const BULK_DOCS = num('BENCH_BULK_DOCS', 5000);
const BIG_MIB = num('BENCH_BIG_MIB', 50);
const BATCH_MIB = num('BENCH_BATCH_MIB', 1024);
const BATCH_SMALL_MIB = num('BENCH_BATCH_SMALL_MIB', 256);
const BATCH_RUNS = num('BENCH_BATCH_RUNS', 2);
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',')) : null;
const want = (group) => !ONLY || ONLY.has(group);

const CLI = process.env.BENCH_CLI ?? join(root, 'bin', 'facectl.js');
/** The commit the API row is held against (issue 23): a build of it, given with --baseline. */
const BASELINE_COMMIT = 'd245c82';
const CLIENT = join(root, 'bench', 'lib', 'undici-client.mjs');
const BARE = join(root, 'bench', 'lib', 'bare-server.mjs');
const tmp = mkdtempSync(join(tmpdir(), 'facectl-bench-'));
const log = (line) => process.stderr.write(`bench: ${line}\n`);

// Both sides run without NODE_EXTRA_CA_CERTS (Node 20 parses that bundle at every start) and without
// the user's configuration.
const env = {
  ...process.env,
  FACECTL_CONFIG_DIR: join(tmp, 'config'),
  FACECTL_STATE_DIR: join(tmp, 'state'),
  NO_COLOR: '1',
};
delete env.NODE_EXTRA_CA_CERTS;

const rows = [];
function row(group, name, fields) {
  const r = { group, name, ...fields };
  rows.push(r);
  log(`${name}: ${r.value ?? r.note}  (${r.verdict})`);
}
const fmt = (x, digits = 1) => (x == null || Number.isNaN(x) ? '—' : x.toFixed(digits));
const notAvailable = (group, name, budget, why) =>
  row(group, name, { budget, verdict: 'not available', note: why.split('\n').find((l) => l.trim()) ?? why });

/** Whether `facectl <words> --help` exists (the CLI is still being written). */
async function hasCommand(words) {
  const r = await run(NODE, [CLI, ...words, '--help'], { env, capture: true });
  return r.code === 0 && !/unknown command/i.test(r.stderr);
}

/** Times two commands alternately; medians of `runs` each. A failing command ends the row. */
async function alternate(runs, a, b) {
  const ta = [];
  const tb = [];
  for (let i = 0; i < runs; i++) {
    for (const [side, cmd] of i % 2 === 0
      ? [
          ['a', a],
          ['b', b],
        ]
      : [
          ['b', b],
          ['a', a],
        ]) {
      const r = await cmd();
      if (r.code !== 0) throw new Error(`${side === 'a' ? 'measured' : 'baseline'} side exited ${r.code}: ${r.stderr}`);
      (side === 'a' ? ta : tb).push(r.ms);
    }
  }
  return { a: median(ta), b: median(tb) };
}

async function freshService(extra = []) {
  const svc = await startServer(NODE, [CLI, 'serve', '--port', '0', '--json', ...extra], env);
  const key = svc.users.find((u) => u.plan === 'pro').key;
  await api(svc.base_url, key, 'POST', '/v1/faces', { name: 'Bench Face', alias: 'bench-face' });
  return { ...svc, key, cliEnv: { ...env, FACECTL_API_KEY: key, FACECTL_BASE_URL: svc.base_url } };
}

const nodeE0 = () => run(NODE, ['-e', '0'], { env });

async function startupRows() {
  for (const [args, limit] of [
    [['--version'], 1.3],
    [['--help'], 1.5],
  ]) {
    const name = `facectl ${args[0]} vs node -e 0`;
    const budget = `<= ${limit}x`;
    try {
      const m = await alternate(START_RUNS, () => run(NODE, [CLI, ...args], { env }), nodeE0);
      const ratio = m.a / m.b;
      row('startup', name, {
        value: `${fmt(ratio, 2)}x (${fmt(m.a)} ms / ${fmt(m.b)} ms)`,
        ratio,
        budget,
        verdict: ratio <= limit ? 'pass' : 'miss',
      });
    } catch (error) {
      notAvailable('startup', name, budget, error.message);
    }
  }
}

async function apiRow(extra = ['--json'], budgeted = true) {
  const name = `facectl faces get <alias> ${extra.join(' ')} vs node -e 0`;
  if (!(await hasCommand(['faces', 'get']))) return notAvailable('api', name, '<= 5x', 'faces get does not exist yet');
  const svc = await freshService();
  try {
    const cmd = () => run(NODE, [CLI, 'faces', 'get', 'bench-face', ...extra], { env: svc.cliEnv });
    const m = await alternate(START_RUNS, cmd, nodeE0);
    const ratio = m.a / m.b;
    row('api', name, {
      value: `${fmt(ratio, 2)}x (${fmt(m.a)} ms / ${fmt(m.b)} ms)`,
      ratio,
      budget: budgeted ? '<= 5x' : 'none (what --jq costs)',
      verdict: budgeted ? (ratio <= 5 ? 'pass' : 'miss') : 'info',
    });
  } catch (error) {
    notAvailable('api', name, '<= 5x', error.message);
  } finally {
    await svc.stop();
  }
}

/**
 * One API command against the same command of a build of d245c82 (BASELINE), on one service: the
 * budget is a ratio to where the project stood then, so a later slip shows here.
 */
async function baselineRow() {
  const name = `facectl faces get <alias> --json vs a build of ${BASELINE_COMMIT}`;
  const budget = '<= 0.85x';
  const baselineBin = BASELINE === undefined ? undefined : join(BASELINE, 'bin', 'facectl.js');
  if (baselineBin === undefined || !existsSync(baselineBin)) {
    const why =
      baselineBin === undefined
        ? `no build of ${BASELINE_COMMIT} given: pass --baseline DIR or BENCH_BASELINE=DIR (node bench/baseline.mjs DIR makes one)`
        : `${baselineBin} is missing: make the build with node bench/baseline.mjs ${BASELINE}`;
    return notAvailable('api', name, budget, why);
  }
  const svc = await freshService();
  try {
    const faces = (bin) => () => run(NODE, [bin, 'faces', 'get', 'bench-face', '--json'], { env: svc.cliEnv });
    const m = await alternate(START_RUNS, faces(CLI), faces(baselineBin));
    const ratio = m.a / m.b;
    row('api', name, {
      value: `${fmt(ratio, 2)}x (${fmt(m.a)} ms / ${fmt(m.b)} ms)`,
      ratio,
      budget,
      verdict: ratio <= 0.85 ? 'pass' : 'miss',
    });
  } catch (error) {
    notAvailable('api', name, budget, error.message);
  } finally {
    await svc.stop();
  }
}

/**
 * docs submit of BULK_DOCS documents against the raw undici client (same bodies, each on a fresh service
 * warmed alike), and the same client against facectl serve and against a bare node:http server (the service's cost).
 */
async function bulkRows() {
  const file = join(tmp, 'bulk.ndjson');
  await writeNdjson(file, BULK_DOCS, 2000, 'bench-face');
  // Every server gets the same 1,000 documents first, unmeasured, so no side pays the server's warm-up
  // (its code still being compiled).
  const warmFile = join(tmp, 'warm.ndjson');
  await writeNdjson(warmFile, 1000, 2000, 'bench-face');
  const warm = async (server, key) => {
    const r = await run(NODE, [CLIENT, warmFile, server.base_url, key, '16'], { env, capture: true });
    if (r.code !== 0) throw new Error(`warm-up failed: ${r.stdout}${r.stderr}`);
  };
  /** Runs `measure` on a fresh service (with `extra` flags) that has taken the warm-up documents. */
  const onWarmService = async (extra, measure) => {
    const svc = await freshService(extra);
    try {
      await warm(svc, svc.key);
      await measure(svc);
    } finally {
      await svc.stop();
    }
  };
  const cliOk = await hasCommand(['docs', 'submit']);
  // The same batch through a build of d245c82's CLI (the bulk row's last pass, issue 23), when given.
  const baselineBin = BASELINE === undefined ? undefined : join(BASELINE, 'bin', 'facectl.js');
  const withBaseline = cliOk && want('bulk') && baselineBin !== undefined && existsSync(baselineBin);
  const old = [];
  const cli = [];
  const raw = [];
  const rawData = [];
  const bare = [];
  // CPU seconds of the service and of the CLI during each docs submit.
  const cpuShare = [];
  for (let i = 0; i < BULK_RUNS; i++) {
    // Each side gets a fresh service of its own, warmed alike. Sharing one service put the second side
    // on a service that had already taken a batch, and a service's first batch is the slower one:
    // whichever side went first measured about 15% slower, so the order of each pair decided its ratio.
    const sides = [
      () =>
        onWarmService([], async (svc) => {
          const r = await run(NODE, [CLIENT, file, svc.base_url, svc.key, '16'], { env, capture: true });
          const out = JSON.parse(r.stdout);
          if (r.code !== 0 || out.failed > 0) throw new Error(`undici client failed: ${r.stdout}${r.stderr}`);
          raw.push(BULK_DOCS / (r.ms / 1000));
          log(`  run ${i + 1}: undici client ${fmt(BULK_DOCS / (r.ms / 1000), 0)} docs/s`);
        }),
    ];
    if (cliOk && want('bulk')) {
      sides.push(() =>
        onWarmService([], async (svc) => {
          const serviceBefore = processCpuSeconds(svc.child.pid);
          const r = await run(NODE, [CLI, 'docs', 'submit', '--file', file, '--concurrency', '16', '--json'], {
            env: svc.cliEnv,
            cpu: true,
          });
          const serviceAfter = processCpuSeconds(svc.child.pid);
          cli.push(r.code === 0 ? BULK_DOCS / (r.ms / 1000) : Number.NaN);
          log(`  run ${i + 1}: docs submit ${fmt(BULK_DOCS / (r.ms / 1000), 0)} docs/s`);
          if (r.code !== 0) log(`docs submit exited ${r.code}: ${r.stderr.slice(0, 300)}`);
          if (r.code === 0 && serviceBefore !== null && serviceAfter !== null && r.cpuSeconds) {
            cpuShare.push({ service: serviceAfter - serviceBefore, cli: r.cpuSeconds });
          }
        }),
      );
    }
    if (withBaseline) {
      sides.push(() =>
        onWarmService([], async (svc) => {
          const r = await run(NODE, [baselineBin, 'docs', 'submit', '--file', file, '--concurrency', '16', '--json'], {
            env: svc.cliEnv,
          });
          old.push(r.code === 0 ? BULK_DOCS / (r.ms / 1000) : Number.NaN);
          log(`  run ${i + 1}: docs submit of ${BASELINE_COMMIT} ${fmt(BULK_DOCS / (r.ms / 1000), 0)} docs/s`);
        }),
      );
    }
    for (const side of i % 2 === 0 ? sides : sides.reverse()) await side();
    if (want('service')) {
      // The undici client on a fresh service in memory is the bulk row's baseline side, above. Here the
      // same client against a bare server and against a fresh service with --data, in alternating order.
      const order = [
        async () => {
          const b = await startServer(NODE, [BARE], env);
          try {
            await warm(b, 'none');
            const r = await run(NODE, [CLIENT, file, b.base_url, 'none', '16'], { env, capture: true });
            bare.push(BULK_DOCS / (JSON.parse(r.stdout).ms / 1000));
          } finally {
            await b.stop();
          }
        },
        async () => {
          const dataDir = mkdtempSync(join(tmp, 'data-'));
          try {
            await onWarmService(['--data', join(dataDir, 'state.json')], async (svc) => {
              const r = await run(NODE, [CLIENT, file, svc.base_url, svc.key, '16'], { env, capture: true });
              rawData.push(BULK_DOCS / (JSON.parse(r.stdout).ms / 1000));
            });
          } finally {
            rmSync(dataDir, { recursive: true, force: true });
          }
        },
      ];
      for (let k = 0; k < order.length; k++) await order[(i + k) % order.length]();
    }
  }
  const subName = `docs submit ${BULK_DOCS} x 2 KB NDJSON, concurrency 16, vs undici Pool`;
  if (want('bulk')) {
    if (!cliOk) notAvailable('bulk', subName, '>= 0.95x', 'docs submit does not exist yet');
    else {
      // Each run times both clients one after the other, each on its own fresh service: the ratio of
      // each pair cancels what the shared machine was doing at the time, and the row is their median.
      const ratio = median(cli.map((c, k) => c / raw[k]));
      const pairs = cli.map((c, k) => fmt(c / raw[k], 2)).join(' ');
      row('bulk', subName, {
        value: `${fmt(ratio, 2)}x (runs: ${pairs}; medians ${fmt(median(cli), 0)} / ${fmt(median(raw), 0)} docs/s)`,
        ratio,
        budget: '>= 0.95x',
        verdict: ratio >= 0.95 ? 'pass' : 'miss',
      });
    }
  }
  if (want('bulk') && cliOk) {
    const name = `docs submit ${BULK_DOCS} x 2 KB NDJSON vs the same through a build of ${BASELINE_COMMIT}`;
    if (!withBaseline) notAvailable('bulk', name, '>= 1x', `no build of ${BASELINE_COMMIT} given (--baseline DIR)`);
    else {
      // Paired like the row above: each run's ratio of the two CLIs, each on a fresh service of its own.
      const ratio = median(cli.map((c, k) => c / old[k]));
      row('bulk', name, {
        value: `${fmt(ratio, 2)}x (runs: ${cli.map((c, k) => fmt(c / old[k], 2)).join(' ')}; medians ${fmt(median(cli), 0)} / ${fmt(median(old), 0)} docs/s)`,
        ratio,
        budget: '>= 1x',
        verdict: ratio >= 1 ? 'pass' : 'miss',
      });
    }
  }
  if (want('bulk') && cliOk) {
    // Is the local service what limits the batch? Both run on the same cores: compare the CPU each
    // spends on the same documents. The service costs less than its client when the ratio is below 1.
    const name = `facectl serve CPU vs docs submit CPU, same ${BULK_DOCS} documents`;
    if (cpuShare.length === 0) notAvailable('bulk', name, '<= 1x', 'no /proc to read CPU time from');
    else {
      const service = median(cpuShare.map((c) => c.service));
      const client = median(cpuShare.map((c) => c.cli));
      const ratio = service / client;
      row('bulk', name, {
        value: `${fmt(ratio, 2)}x (${fmt((service * 1e6) / BULK_DOCS, 0)} / ${fmt((client * 1e6) / BULK_DOCS, 0)} µs per document)`,
        ratio,
        budget: '<= 1x',
        verdict: ratio <= 1 ? 'pass' : 'miss',
      });
    }
  }
  if (want('service')) {
    // The service's own work (authentication, a real BPE count, the idempotency record, the store) as a
    // share of a bare server's throughput: reported, not budgeted. Whether the service limits a batch
    // is the CPU row above.
    for (const [label, series] of [
      ['in memory', raw],
      ['--data FILE', rawData],
    ]) {
      const ratio = median(series) / median(bare);
      row('service', `facectl serve (${label}) docs/s vs bare node:http JSON server`, {
        value: `${fmt(ratio, 2)}x (${fmt(median(series), 0)} / ${fmt(median(bare), 0)} docs/s)`,
        ratio,
        budget: 'reported',
        verdict: 'info',
      });
    }
  }
}

async function bigDocRows(timeBin) {
  const ok = await hasCommand(['docs', 'submit']);
  const svc = ok ? await freshService() : null;
  try {
    for (const wide of [false, true]) {
      const file = join(tmp, `big-${wide ? 'utf8' : 'ascii'}.txt`);
      await writeText(file, BIG_MIB, wide);
      for (const from of ['file', 'stdin']) {
        const name = `peak RSS, ${BIG_MIB} MiB document, ${wide ? 'non-ASCII' : 'ASCII'}, from ${from}`;
        if (!svc) {
          notAvailable('bigdoc', name, '<= 120 MiB', 'docs submit does not exist yet');
          continue;
        }
        const args = [CLI, 'docs', 'submit', '--alias', 'bench-face', '--label', 'big', '--format', 'text', '--json'];
        const r = await peakRss(timeBin, tmp, NODE, from === 'file' ? [...args, '--file', file] : [...args, '-'], {
          env: svc.cliEnv,
          stdinFile: from === 'stdin' ? file : undefined,
        });
        if (r.code !== 0) {
          notAvailable('bigdoc', name, '<= 120 MiB', `exit ${r.code}: ${r.stderr}`);
          continue;
        }
        row('bigdoc', name, {
          value: `${fmt(r.mib)} MiB`,
          mib: r.mib,
          budget: '<= 120 MiB',
          verdict: r.mib <= 120 ? 'pass' : 'miss',
        });
      }
      rmSync(file, { force: true });
    }
  } finally {
    await svc?.stop();
  }
}

async function batchRows(timeBin) {
  const name = `peak RSS, ${BATCH_MIB} MiB NDJSON batch vs ${BATCH_SMALL_MIB} MiB (16 KB docs, concurrency 16)`;
  const budget = '<= 1.2x the small batch and <= 160 MiB';
  if (!(await hasCommand(['docs', 'submit'])))
    return notAvailable('batch', name, budget, 'docs submit does not exist yet');
  // And a file just under the size kept in memory between its check and its sending (input/ndjson.ts).
  const KEPT_MIB = 14;
  const sizes = [KEPT_MIB, BATCH_SMALL_MIB, BATCH_MIB];
  const files = new Map();
  for (const mib of sizes) {
    const file = join(tmp, `batch-${mib}.ndjson`);
    // The kept file of the bulk row's 2 KB documents: the more lines, the more a kept line's cost shows.
    const [docBytes, lineBytes] = mib === KEPT_MIB ? [2000, 2100] : [16_000, 16_400];
    await writeNdjson(file, Math.round((mib * 1024 * 1024) / lineBytes), docBytes, 'bench-face');
    files.set(mib, file);
  }
  // One peak is one process's garbage-collection timing: each size runs BATCH_RUNS times, alternating,
  // and the row compares medians.
  const peaks = new Map(sizes.map((mib) => [mib, []]));
  try {
    for (let i = 0; i < BATCH_RUNS; i++) {
      for (const mib of i % 2 === 0 ? sizes : [...sizes].reverse()) {
        const svc = await freshService();
        try {
          const started = performance.now();
          const args = [CLI, 'docs', 'submit', '--file', files.get(mib), '--concurrency', '16', '--json', '--restart'];
          const r = await peakRss(timeBin, tmp, NODE, args, { env: svc.cliEnv });
          if (r.code !== 0) return notAvailable('batch', name, budget, `exit ${r.code}: ${r.stderr}`);
          log(`${mib} MiB batch: peak ${fmt(r.mib)} MiB in ${fmt((performance.now() - started) / 1000)} s`);
          peaks.get(mib).push(r.mib);
        } finally {
          await svc.stop();
        }
      }
    }
  } finally {
    for (const file of files.values()) rmSync(file, { force: true });
  }
  const small = median(peaks.get(BATCH_SMALL_MIB));
  const big = median(peaks.get(BATCH_MIB));
  const ratio = big / small;
  row('batch', name, {
    value: `${fmt(big)} MiB vs ${fmt(small)} MiB (${fmt(ratio, 2)}x)`,
    ratio,
    mib: big,
    budget,
    verdict: ratio <= 1.2 && big <= 160 ? 'pass' : 'miss',
  });
  const kept = median(peaks.get(KEPT_MIB));
  row('batch', `peak RSS, ${KEPT_MIB} MiB NDJSON batch of 2 KB docs (kept in memory once checked)`, {
    value: `${fmt(kept)} MiB`,
    mib: kept,
    budget: '<= 160 MiB',
    verdict: kept <= 160 ? 'pass' : 'miss',
  });
}

const nodeVersion = (await run(NODE, ['--version'], { env, capture: true })).stdout.trim();
log(`node ${nodeVersion} (${NODE}); temp files in ${tmp}`);
try {
  if (want('startup')) await startupRows();
  if (want('api')) await apiRow();
  if (want('api')) await baselineRow();
  // --jq loads jq (WebAssembly) only when given: the row above must not pay for it; this one shows its cost.
  if (want('jq') && (await hasCommand(['faces', 'get']))) {
    const probe = await run(NODE, [CLI, 'openapi', '--jq', '.openapi'], { env, capture: true });
    if (probe.code === 0) await apiRow(['--jq', '.name'], false);
  }
  if (want('bulk') || want('service')) await bulkRows();
  const timeBin = want('bigdoc') || want('batch') ? findTime(log) : null;
  if (want('bigdoc')) await bigDocRows(timeBin);
  if (want('batch')) await batchRows(timeBin);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

const info = {
  date: new Date().toISOString(),
  node: nodeVersion,
  machine: machine(),
  settings: { START_RUNS, BULK_RUNS, BULK_DOCS, BIG_MIB, BATCH_MIB, BATCH_SMALL_MIB, BATCH_RUNS },
};
const table = rows.map((r) => ({ row: r.name, result: r.value ?? r.note, budget: r.budget, verdict: r.verdict }));
console.table(table);
const md = [
  `Bench of ${info.date.slice(0, 10)}: Node ${nodeVersion}, ${info.machine.nproc} cores, ${info.machine.memory_gib} GiB, ${info.machine.cpu}`,
  '',
  '| row | result (median) | budget | verdict |',
  '|---|---|---|---|',
  ...table.map((t) => `| ${t.row} | ${t.result} | ${t.budget} | ${t.verdict} |`),
  '',
].join('\n');
// One result per Node major (CI runs both, README shows both); a partial run (BENCH_ONLY) writes apart,
// so it never replaces a whole table.
const major = nodeVersion.replace(/^v/, '').split('.')[0];
const stem = ONLY ? `node${major}-partial` : `node${major}`;
const outDir = process.env.BENCH_OUT ?? join(root, 'bench', 'results');
mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, `${stem}.json`), `${JSON.stringify({ ...info, rows }, null, 2)}\n`);
writeFileSync(join(outDir, `${stem}.md`), md);
log(`wrote ${join(outDir, stem)}.json and .md`);
if (argv.includes('--docs') && !ONLY) updateDocs(outDir);

/** Puts every whole table of bench/results (one per Node major) into docs/performance.md, between the bench markers. */
function updateDocs(dir) {
  const page = join(root, 'docs', 'performance.md');
  const text = readFileSync(page, 'utf8');
  const start = '<!-- bench:start -->';
  const end = '<!-- bench:end -->';
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  if (a < 0 || b < a) return log('docs/performance.md has no bench markers: not updated');
  const tables = readdirSync(dir)
    .filter((f) => /^node\d+\.md$/.test(f))
    .sort((x, y) => Number(x.match(/\d+/)[0]) - Number(y.match(/\d+/)[0]))
    .map((f) => readFileSync(join(dir, f), 'utf8').trim());
  writeFileSync(page, `${text.slice(0, a + start.length)}\n${tables.join('\n\n')}\n${text.slice(b)}`);
  log('updated the bench tables in docs/performance.md');
}
