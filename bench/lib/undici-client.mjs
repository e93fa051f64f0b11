// The baseline client: one undici Pool (16 connections, keep-alive) posting each NDJSON line of a file
// as the body of POST /v1/compile/documents, 16 in flight, each with its own Idempotency-Key as the CLI
// sends (so the service does the same work for both). Usage: node undici-client.mjs FILE BASE_URL KEY [N]
// Prints {"ok": n, "failed": n, "ms": wall time of the posting}.
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';

const [file, baseUrl, key, concurrencyArg] = process.argv.slice(2);
const concurrency = Number(concurrencyArg ?? 16);
const lines = readFileSync(file, 'utf8')
  .split('\n')
  .filter((l) => l.length > 0);
const pool = new Pool(baseUrl, { connections: concurrency, pipelining: 1 });
const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
let next = 0;
let ok = 0;
let failed = 0;
const started = performance.now();
async function worker() {
  while (next < lines.length) {
    const body = lines[next++];
    const res = await pool.request({
      method: 'POST',
      path: '/v1/compile/documents',
      headers: { ...headers, 'idempotency-key': randomUUID() },
      body,
    });
    await res.body.text();
    if (res.statusCode >= 200 && res.statusCode < 300) ok++;
    else failed++;
  }
}
await Promise.all(Array.from({ length: concurrency }, worker));
const ms = performance.now() - started;
await pool.close();
process.stdout.write(`${JSON.stringify({ ok, failed, ms })}\n`);
