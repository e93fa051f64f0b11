import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, ROOT } from './run-cli.js';
import { call, expectContract, type Json, type Plan } from './service.js';

/**
 * `node bin/facectl.js serve --port 0 --json --debug` as a separate process, for end-to-end tests of
 * the built CLI. The first stdout line gives the base URL and the bootstrap keys; --debug makes the
 * service log one line per request on stderr, which is how a test shows that nothing was sent.
 */

export interface ServeProcess {
  baseUrl: string;
  /** The process's id (the bin's node, or a shell that became it with exec). */
  pid: number;
  key(plan: Plan): string;
  /** Requests answered so far (access-log lines); may lag behind by a line still in the pipe. */
  requests(): number;
  /**
   * Requests answered before now, exactly: sends a probe request and counts the log lines before the
   * probe's own (the log is in order, so every earlier request's line has arrived by then).
   */
  settledRequests(): Promise<number>;
  /** The environment that points the bin at this service with the plan's key (Pro unless given). */
  env(plan?: Plan): { FACECTL_API_KEY: string; FACECTL_BASE_URL: string };
  stop(): Promise<void>;
  /** What serve wrote on stderr so far (its access log, its stop message). */
  stderr(): string;
  /** kill -9: the process ends at once, saving nothing more (resolves once it has exited). */
  kill(): Promise<void>;
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Builds dist/ (without type declarations) when it is missing or older than src/. */
export function ensureBuilt(): void {
  const cli = join(ROOT, 'dist', 'cli.cjs');
  if (!existsSync(cli) || statSync(cli).mtimeMs < newestMtime(join(ROOT, 'src'))) {
    execFileSync(process.execPath, ['scripts/build.mjs', '--no-types'], { cwd: ROOT, stdio: 'inherit' });
  }
}

// One access-log line per request; the probes of settledRequests() are not counted.
const LOG_LINE =
  /^(?:facectl serve: |\{"debug":")?(?:GET|POST|PATCH|DELETE|PUT|HEAD) (?!\/v1\/faces\/probe-)\/\S* \d{3} /gm;

function countRequests(log: string): number {
  return (log.match(LOG_LINE) ?? []).length;
}

/**
 * `command` runs the bin: this checkout's unless given (an installed package's bin, say). `onSpawn`
 * learns the process's pid at once, before it is ready (to kill it while it starts).
 */
export async function startServeProcess(
  extraArgs: string[] = [],
  command: string[] = [process.execPath, BIN],
  onSpawn?: (pid: number) => void,
): Promise<ServeProcess> {
  const [file, ...args] = command as [string, ...string[]];
  const child = spawn(file, [...args, 'serve', '--port', '0', '--json', '--debug', ...extraArgs], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  onSpawn?.(child.pid as number);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const first = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${stderr}`)), 15_000);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const newline = stdout.indexOf('\n');
      if (newline >= 0) {
        clearTimeout(timer);
        resolve(stdout.slice(0, newline));
      }
    });
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
  const started = JSON.parse(first) as { base_url: string; users: { plan: Plan; key: string }[] };
  const key = (plan: Plan) => {
    const user = started.users.find((u) => u.plan === plan);
    if (!user) throw new Error(`no ${plan} user`);
    return user.key;
  };
  return {
    baseUrl: started.base_url,
    pid: child.pid as number,
    key,
    env: (plan = 'pro') => ({ FACECTL_API_KEY: key(plan), FACECTL_BASE_URL: started.base_url }),
    requests: () => countRequests(stderr),
    stderr: () => stderr,
    settledRequests: async () => {
      const probe = `/v1/faces/probe-${Math.random().toString(36).slice(2)}`;
      await fetch(`${started.base_url}${probe}`, { headers: { Authorization: `Bearer ${started.users[0]?.key}` } });
      const deadline = Date.now() + 5000;
      while (!stderr.includes(` ${probe} `)) {
        if (Date.now() > deadline) throw new Error('the probe request never reached the access log');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return countRequests(stderr.slice(0, stderr.indexOf(` ${probe} `)));
    },
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
    kill: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

/**
 * The set-up of the end-to-end files that drive documents and threads: dist/ built, `facectl serve`
 * started, and a face (alias `ada-lovelace` unless given) created for the Pro user, so that every
 * test of the file can submit to it without depending on another test.
 */
export async function startServeWithFace(alias = 'ada-lovelace', extraArgs: string[] = []): Promise<ServeProcess> {
  ensureBuilt();
  const service = await startServeProcess(extraArgs);
  const res = await fetch(`${service.baseUrl}/v1/faces`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${service.key('pro')}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'Ada', alias }),
  });
  if (res.status !== 201) {
    await service.stop();
    throw new Error(`creating the face ${alias} answered ${res.status}: ${await res.text()}`);
  }
  return service;
}

/**
 * What the service stores, read back as the Pro user through the API (the answer checked against
 * the contract): the check that a command's effect reached the service.
 */
export async function readBack(
  service: { baseUrl: string; key(plan: Plan): string },
  route: 'getDocument' | 'getFace' | 'getThread',
  params: Record<string, string>,
): Promise<Json> {
  return expectContract(route, await call(service, route, { key: service.key('pro'), params }), 200);
}
