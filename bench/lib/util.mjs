// Shared helpers of the bench: child processes, timing, peak RSS, the local service, test data.
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, openSync, readFileSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/**
 * Runs a command to completion; stdin from a file or ignored, stdout to /dev/null unless captured.
 * With `cpu`, also the CPU time it used (user + system, seconds), sampled from /proc every 10 ms until
 * it exits (so the last few milliseconds are missed); null where there is no /proc.
 */
export async function run(cmd, args, { env, stdinFile, capture = false, cpu = false } = {}) {
  const stdin = stdinFile ? openSync(stdinFile, 'r') : 'ignore';
  const started = performance.now();
  const child = spawn(cmd, args, { env, stdio: [stdin, capture ? 'pipe' : 'ignore', 'pipe'] });
  let stdout = '';
  let stderr = '';
  // Decoded as a stream: a character cut between two chunks stays whole.
  if (capture) child.stdout.setEncoding('utf8').on('data', (c) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
  let cpuSeconds = null;
  const timer = cpu
    ? setInterval(() => {
        const seconds = processCpuSeconds(child.pid);
        if (seconds !== null) cpuSeconds = seconds;
      }, 10)
    : undefined;
  const [code] = await once(child, 'close');
  clearInterval(timer);
  return { code, ms: performance.now() - started, stdout, stderr, cpuSeconds };
}

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

/** User + system CPU seconds a running process has used so far (Linux /proc), or null. */
export function processCpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name (which may hold spaces) start at ") ".
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** /usr/bin/time if present (installed with apt-get when missing and we may); else null. */
export function findTime(log) {
  if (existsSync('/usr/bin/time')) return '/usr/bin/time';
  log('/usr/bin/time is missing: trying `apt-get install -y time` to measure peak RSS');
  spawnSync('apt-get', ['install', '-y', 'time'], { stdio: 'ignore' });
  if (existsSync('/usr/bin/time')) return '/usr/bin/time';
  log('could not install it: peak RSS is read by polling /proc/<pid>/status VmHWM instead');
  return null;
}

/**
 * Peak RSS of one command in MiB: GNU time's %M, or VmHWM polled from /proc while it runs. Either way
 * it is the command's own process (the CLI): the service it talks to was started apart (startServer),
 * not under time, and its memory is not counted.
 */
export async function peakRss(timeBin, tmp, cmd, args, opts) {
  if (timeBin) {
    const out = join(tmp, 'time.out');
    const r = await run(timeBin, ['-f', '%M', '-o', out, cmd, ...args], opts);
    const kib = Number(readFileSync(out, 'utf8').trim().split('\n').pop());
    rmSync(out, { force: true });
    return { ...r, mib: kib / 1024 };
  }
  const stdin = opts.stdinFile ? openSync(opts.stdinFile, 'r') : 'ignore';
  const child = spawn(cmd, args, { env: opts.env, stdio: [stdin, 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
  let kib = 0;
  const timer = setInterval(() => {
    try {
      const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) kib = Math.max(kib, Number(m[1]));
    } catch {
      // the process ended between two polls
    }
  }, 10);
  const [code] = await once(child, 'close');
  clearInterval(timer);
  return { code, stderr, mib: kib / 1024 };
}

/** Starts `facectl serve --port 0 --json` (or another server printing {"base_url"} first). */
export async function startServer(cmd, args, env) {
  const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise((resolve, reject) => {
    lines.once('line', resolve);
    child.once('close', (code) => reject(new Error(`server exited (${code}) before it listened: ${stderr}`)));
  });
  lines.on('line', () => {});
  const info = JSON.parse(first);
  return {
    ...info,
    child,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'close');
    },
  };
}

export async function api(baseUrl, key, method, path, body) {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

const WORDS =
  'the of and to in is was for on that with as by at from his her which an be this had are were not or but it they one all'.split(
    ' ',
  );
const WIDE = 'Zürich naïve façade smörgåsbord Ελληνικά русский 日本語の文章 中文 한국어 “quotes” \\ "q" emoji 🎉'.split(
  ' ',
);

/** Text of about `bytes` UTF-8 bytes: words, punctuation, newlines; with `wide`, many non-ASCII ones. */
export function text(bytes, seed = 1, wide = false) {
  let x = seed >>> 0 || 1;
  const parts = [];
  let size = 0;
  while (size < bytes) {
    x = (x * 1103515245 + 12345) >>> 0;
    const pool = wide && x % 3 === 0 ? WIDE : WORDS;
    const w = pool[(x >>> 8) % pool.length] + ((x >>> 4) % 17 === 0 ? '.\n' : ' ');
    parts.push(w);
    size += Buffer.byteLength(w);
  }
  return parts.join('');
}

/** Writes `count` NDJSON documents of ~docBytes each to `path`, through a stream (flat memory). */
export async function writeNdjson(path, count, docBytes, alias) {
  const out = createWriteStream(path);
  const bodies = Array.from({ length: 64 }, (_, i) => text(docBytes, i + 7, i % 4 === 0));
  for (let i = 0; i < count; i++) {
    const line = `${JSON.stringify({ alias, label: `doc ${i}`, content: `${i} ${bodies[i % bodies.length]}` })}\n`;
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

/** Writes a text file of `mib` MiB (ASCII, or with many multi-byte characters). */
export async function writeText(path, mib, wide) {
  const out = createWriteStream(path);
  const block = Buffer.from(text(1024 * 1024, 3, wide));
  let size = 0;
  while (size < mib * 1024 * 1024) {
    if (!out.write(block)) await once(out, 'drain');
    size += block.length;
  }
  out.end();
  await once(out, 'finish');
}

export function machine() {
  const cpuinfo = existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : '';
  const model = /model name\s*:\s*(.*)/.exec(cpuinfo)?.[1] ?? 'unknown';
  const mem = /MemTotal:\s+(\d+)/.exec(existsSync('/proc/meminfo') ? readFileSync('/proc/meminfo', 'utf8') : '');
  const nproc = spawnSync('nproc', { encoding: 'utf8' }).stdout?.trim() ?? '?';
  return { nproc, memory_gib: mem ? Math.round(Number(mem[1]) / 1024 / 1024) : null, cpu: model };
}
