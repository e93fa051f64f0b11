import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../helpers/fault-server.js';
import { BIN, makeConfigDir, ROOT } from '../helpers/run-cli.js';
import { type ServeProcess, startServeProcess } from '../helpers/serve-process.js';
import { ensureBuilt, type FaultServer, KEY, startFaultServer, tempFile } from './support.js';

// Cases 31-33 of docs/reliability.md: Ctrl-C (SIGINT to the bin) and a closed stdout.

interface Running {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves when stderr matches. */
  waitFor(pattern: RegExp): Promise<void>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(args: string[], env: Record<string, string>): Running {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      NO_COLOR: '1',
      FACECTL_CONFIG_DIR: makeConfigDir(),
      ...env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.end();
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString('utf8');
  });
  child.stderr.on('data', (c: Buffer) => {
    err += c.toString('utf8');
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal });
    }),
  );
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exit,
    waitFor: async (pattern) => {
      const deadline = Date.now() + 15_000;
      while (!pattern.test(err)) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`never saw ${pattern}: ${err}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
  };
}

function documentBody(body: string, n: number) {
  const doc = JSON.parse(body);
  return {
    document_id: `doc_${n}`,
    alias: doc.alias,
    label: doc.label,
    source: 'submit',
    version: 1,
    content: doc.content,
    token_count: 3,
    tokens_used: 0,
    tokens_limit: 0,
    synced: false,
    created_at: '2026-01-01T00:00:00Z',
    updated_at: '2026-01-01T00:00:00Z',
    prepare_status: null,
  };
}

let server: FaultServer;
let serve: ServeProcess;
beforeAll(async () => {
  ensureBuilt();
  server = await startFaultServer();
  serve = await startServeProcess();
});
afterAll(async () => {
  await server.close();
  await serve.stop();
});

describe('signals', () => {
  it('case 31: Ctrl-C during a batch submit to a slow server -> stops new requests, exit 130, says how many were done (journal/--resume not built)', async () => {
    // Each document takes 400 ms; with --concurrency 1, Ctrl-C lands after the first two are answered.
    let answered = 0;
    server.handle(async (req, res, index) => {
      await new Promise((resolve) => setTimeout(resolve, 400));
      answered++;
      json(res, 201, documentBody(req.body, index));
    });
    server.requests.length = 0;
    const lines = Array.from({ length: 20 }, (_, i) =>
      JSON.stringify({ alias: 'ada-x', label: `l${i}`, content: `doc ${i}` }),
    );
    const batch = tempFile('batch.ndjson', `${lines.join('\n')}\n`);
    const run = start(['docs', 'submit', '--file', batch, '--concurrency', '1', '--json'], {
      FACECTL_BASE_URL: server.baseUrl,
      FACECTL_API_KEY: KEY,
    });
    const deadline = Date.now() + 15_000;
    while (answered < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    run.child.kill('SIGINT');
    const { code } = await run.exit;
    const sentAtExit = server.requests.length;
    expect(code, run.stderr()).toBe(130);
    expect(run.stderr()).toMatch(/\b(\d+)\/20\b.*done|\b(\d+) of 20\b/);
    const done = Number(/\b(\d+)(?:\/| of )20\b/.exec(run.stderr())?.[1]);
    expect(done).toBeGreaterThanOrEqual(2);
    expect(done).toBeLessThan(20);
    // Results printed for the finished ones only, and no request started after the interrupt.
    expect(run.stdout().trim().split('\n').filter(Boolean).length).toBeLessThanOrEqual(done);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(server.requests.length).toBe(sentAtExit);
    expect(sentAtExit).toBeLessThan(20);
  });

  it('case 32: output piped into head (EPIPE) -> quiet exit', async () => {
    // A 16 MB answer cannot fit in the pipe, so the CLI is still writing when the reader goes away.
    server.handle((_req, res) =>
      json(res, 200, { alias: 'ada-x', created: 1767225600, owned_by: 'usr_1', pad: 'x'.repeat(16 * 1024 * 1024) }),
    );
    const run = start(['api', 'GET', '/v1/faces/face_1'], { FACECTL_BASE_URL: server.baseUrl, FACECTL_API_KEY: KEY });
    await Promise.race([new Promise<void>((resolve) => run.child.stdout.once('data', () => resolve())), run.exit]);
    expect(run.child.exitCode, run.stderr()).toBeNull(); // still writing
    run.child.stdout.destroy(); // like `| head -c 100` exiting
    const { code, signal } = await run.exit;
    expect(run.stderr()).toBe('');
    expect(signal === 'SIGPIPE' || code === 0 || code === 141).toBe(true);
  });

  it('case 33: Ctrl-C while waiting for an OAuth connection -> exit 130', async () => {
    const run = start(['oauth', 'connect', 'example', '--no-browser'], {
      FACECTL_BASE_URL: serve.baseUrl,
      FACECTL_API_KEY: serve.key('connect'),
    });
    await run.waitFor(/\/authorize|https?:\/\/\S+/);
    const before = await serve.settledRequests();
    expect(before).toBeGreaterThanOrEqual(1);
    run.child.kill('SIGINT');
    const { code } = await run.exit;
    expect(code, run.stderr()).toBe(130);
    expect(run.stderr()).toMatch(/interrupted|cancel/i);
    // Not connected: the provider list still shows no connection.
    const list = await fetch(`${serve.baseUrl}/v1/oauth`, {
      headers: { Authorization: `Bearer ${serve.key('connect')}` },
    });
    expect(JSON.stringify(await list.json())).not.toMatch(/"connected":\s*true/);
  });
});
