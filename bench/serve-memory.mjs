#!/usr/bin/env node
// The memory of `facectl serve` under large documents (docs/performance.md, last row): DOCS documents
// of MIB MiB sent at once by one free-plan key, as plain HTTP clients that retry a 429 after its
// Retry-After. Prints serve's RSS at start, its peak, and its RSS SETTLE seconds after the last answer.
//
//   node bench/serve-memory.mjs [--data] [--node PATH] [--cli PATH/bin/facectl.js]
//   SERVE_MEM_DOCS=6 SERVE_MEM_MIB=60 SERVE_MEM_SETTLE=5
//
// --data runs serve with --data FILE (a temporary one); --cli measures another build (say main's).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { api, startServer, text } from './lib/util.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const flag = (name) => {
  const at = argv.indexOf(name);
  return at >= 0 ? argv[at + 1] : undefined;
};
const NODE = flag('--node') ?? process.execPath;
const CLI = flag('--cli') ?? join(root, 'bin', 'facectl.js');
const DOCS = Number(process.env.SERVE_MEM_DOCS ?? 6);
const MIB = Number(process.env.SERVE_MEM_MIB ?? 60);
const SETTLE = Number(process.env.SERVE_MEM_SETTLE ?? 5);

const tmp = mkdtempSync(join(tmpdir(), 'facectl-serve-memory-'));
const env = { ...process.env, NO_COLOR: '1', FACECTL_CONFIG_DIR: join(tmp, 'config') };
delete env.NODE_EXTRA_CA_CERTS;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** RSS of `pid` in MiB, from /proc. */
const rssMib = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

/** One POST of `body`; resolves with the status and Retry-After. */
function post(baseUrl, key, body) {
  return new Promise((resolve, reject) => {
    const req = request(
      `${baseUrl}/v1/compile/documents`,
      {
        method: 'POST',
        // Keep-alive, as clients are: a refusal is answered while the body is still being sent.
        agent: new Agent({ keepAlive: true }),
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'content-length': body.length,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode, retryAfter: Number(res.headers['retry-after'] ?? 1) }));
      },
    );
    // A refusal before the body is read closes the connection: the answer may come with a reset.
    req.on('error', (error) => (req.res ? undefined : reject(error)));
    req.end(body);
  });
}

const extra = argv.includes('--data') ? ['--data', join(tmp, 'state.db')] : [];
const svc = await startServer(NODE, [CLI, 'serve', '--port', '0', '--json', ...extra], env);
const key = svc.users.find((u) => u.plan === 'free').key;
try {
  await api(svc.base_url, key, 'POST', '/v1/faces', { name: 'Memory', alias: 'memory-face' });
  const content = text(MIB * 1024 * 1024, 11);
  const body = Buffer.from(JSON.stringify({ alias: 'memory-face', label: 'big', content }));
  await sleep(1000);
  const start = rssMib(svc.child.pid);
  let peak = start;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMib(svc.child.pid));
  }, 20);
  const statuses = [];
  let refusals = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: DOCS }, async () => {
      for (let attempt = 0; attempt < 200; attempt++) {
        const answer = await post(svc.base_url, key, body).catch((error) => ({ status: error.code, retryAfter: 1 }));
        if (answer.status !== 429 && answer.status !== 503) return statuses.push(answer.status);
        refusals++;
        await sleep(answer.retryAfter * 1000);
      }
      statuses.push('gave up');
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  await sleep(SETTLE * 1000);
  clearInterval(sampler);
  const after = rssMib(svc.child.pid);
  const hwm = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${svc.child.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  console.log(
    `serve memory (${extra.length ? '--data' : 'no --data'}, Node ${process.version}): ${DOCS} x ${MIB} MiB documents at once, free key: ` +
      `start ${start.toFixed(0)} MiB, peak ${Math.max(peak, hwm).toFixed(0)} MiB, ${after.toFixed(0)} MiB ${SETTLE} s after ` +
      `(${(after - start).toFixed(0)} MiB over start); answers [${statuses.join(' ')}], ${refusals} refusals (429/503) retried, ${seconds.toFixed(1)} s`,
  );
} finally {
  await svc.stop();
  rmSync(tmp, { recursive: true, force: true });
}
