// `npm run demo`: a realistic facectl session against an embedded local service. It starts
// `facectl serve` on a free port, then runs the built CLI the way a user would — in a fresh config
// directory, with the connect-plan bootstrap key — and prints every command with what it printed.
// The only thing it does that a person would do by hand is click Approve on the OAuth consent page:
// the demo submits that form itself, as a browser would.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin', 'facectl.js');
const work = mkdtempSync(join(tmpdir(), 'facectl-demo-'));
const bold = (s) => (process.stdout.isTTY && !process.env.NO_COLOR ? `\x1b[1m${s}\x1b[0m` : s);
const dim = (s) => (process.stdout.isTTY && !process.env.NO_COLOR ? `\x1b[2m${s}\x1b[0m` : s);

// 1. The embedded local service, with loopback imports allowed so the demo can import from a page
//    it serves itself.
//    Its stderr is kept and shown only if it fails: stopped by the demo's SIGTERM it saves, says so on
//    stderr and exits 0.
const service = spawn(process.execPath, [bin, 'serve', '--port', '0', '--json', '--allow-private-urls'], {
  stdio: ['ignore', 'pipe', 'pipe'],
});
let serviceStderr = '';
service.stderr.setEncoding('utf8');
service.stderr.on('data', (chunk) => (serviceStderr += chunk));
const serviceExit = new Promise((resolve) => service.once('exit', (code, signal) => resolve(code ?? signal)));
const first = await new Promise((resolve, reject) => {
  const lines = createInterface({ input: service.stdout });
  lines.once('line', resolve);
  service.once('exit', (code) => reject(new Error(`facectl serve exited with ${code}: ${serviceStderr}`)));
});
const { base_url: baseUrl, users } = JSON.parse(first);
const connectKey = users.find((u) => u.plan === 'connect').key;

// 2. A small page to import, served on loopback.
const page = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(
    'Ada Lovelace wrote the first published algorithm intended for a machine, in her notes on the Analytical Engine (1843).\n',
  );
});
await new Promise((resolve) => page.listen(0, '127.0.0.1', resolve));
const pageUrl = `http://127.0.0.1:${page.address().port}/notes/analytical-engine.txt`;

const env = {
  PATH: process.env.PATH,
  HOME: work,
  FACECTL_CONFIG_DIR: join(work, 'config'),
  FACECTL_STATE_DIR: join(work, 'state'),
  FACECTL_BASE_URL: baseUrl,
  NO_COLOR: '1',
};

/**
 * Runs one facectl command, prints it and then its output in the order facectl wrote it: progress
 * before results, a URL before what follows it. Two pipes would not keep that order (the demo may read
 * either first), so unless the command's stdout is wanted as JSON, both streams go into one pipe.
 * Returns stdout. Stops the demo on failure.
 */
async function facectl(args, { stdin, show, during } = {}) {
  const shown = show ?? `facectl ${args.map((a) => (/[\s"'$]/.test(a) ? JSON.stringify(a) : a)).join(' ')}`;
  console.log(`\n${bold(`$ ${shown}`)}`);
  const merged = !args.includes('--json') && process.platform !== 'win32';
  const child = merged
    ? spawn('/bin/sh', ['-c', 'exec "$0" "$@" 2>&1', process.execPath, bin, ...args], { env, stdio: 'pipe' })
    : spawn(process.execPath, [bin, ...args], { env, stdio: 'pipe' });
  let stdout = '';
  let said = '';
  const watch = (stream, print) => {
    let pending = '';
    stream.setEncoding('utf8');
    stream.on('data', (d) => {
      pending += d;
      const lines = pending.split('\n');
      pending = lines.pop();
      for (const line of lines) print(line);
    });
    return () => pending !== '' && print(pending);
  };
  const endOut = watch(child.stdout, (line) => {
    stdout += `${line}\n`;
    said += `${line}\n`;
    console.log(line);
    during?.(said);
  });
  const endErr = watch(child.stderr, (line) => {
    said += `${line}\n`;
    console.log(dim(line));
    during?.(said);
  });
  child.stdin.end(stdin ?? '');
  const code = await new Promise((resolve) => child.on('close', resolve));
  endOut();
  endErr();
  if (code !== 0) {
    console.error(`demo: that command exited with ${code}`);
    await shutdown(1);
  }
  return stdout;
}

/**
 * Plays the browser's part: opens the consent page and submits its form with Approve, and says so —
 * which page, for which provider account — since no person clicked.
 */
async function approveInBrowser(authorizeUrl) {
  const html = await (await fetch(authorizeUrl)).text();
  const account = /<strong id="account">([^<]*)<\/strong>/.exec(html)?.[1] ?? 'the account shown';
  const provider = new URL(authorizeUrl).pathname.split('/').filter(Boolean).at(1) ?? 'the provider';
  console.log(
    bold(`[demo, as your browser] approving on ${provider}'s consent page: account ${account}, clicked Approve`),
  );
  const action = new URL(/<form[^>]*action="([^"]+)"/.exec(html)[1].replaceAll('&amp;', '&'), authorizeUrl);
  const form = new URLSearchParams();
  for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    form.set(name, value.replaceAll('&amp;', '&').replaceAll('&quot;', '"'));
  }
  form.set('decision', 'approve');
  const decided = await fetch(action, { method: 'POST', body: form, redirect: 'manual' });
  await fetch(new URL(decided.headers.get('location'), authorizeUrl));
}

/** Stops the service (a clean stop on SIGTERM: exit 0) and the page, then exits with `code`. */
async function shutdown(code) {
  service.kill('SIGTERM');
  page.close();
  const served = await serviceExit;
  rmSync(work, { recursive: true, force: true });
  if (served !== 0) {
    process.stderr.write(serviceStderr);
    console.error(`demo: facectl serve exited with ${served} on SIGTERM (expected 0)`);
    process.exit(1);
  }
  process.exit(code);
}

console.log(`Local service: ${baseUrl} (facectl serve --port 0 --json). Config: a fresh directory.`);

await facectl(['auth', 'login', '--api-key-stdin'], {
  stdin: `${connectKey}\n`,
  show: 'echo "$CONNECT_KEY" | facectl auth login --api-key-stdin',
});
await facectl(['keys', 'create', '--name', 'ci', '--expires-in-days', '30', '--budget-usd', '5', '--save', '--yes']);
await facectl(['auth', 'status']);
await facectl([
  'faces',
  'create',
  '--name',
  'Ada Lovelace',
  '--alias',
  'ada-lovelace',
  '--basic-facts',
  '{"born": 1815, "field": "mathematics"}',
  '--default-model',
  'gpt-4o',
]);
await facectl(['docs', 'submit', '--alias', 'ada-lovelace', '--label', 'letters', '-'], {
  stdin: 'Dear Babbage, I have been working on the notes to the translation of the memoir...\n',
  show: 'echo "Dear Babbage, ..." | facectl docs submit --alias ada-lovelace --label letters -',
});
const batch = join(work, 'batch.ndjson');
writeFileSync(
  batch,
  [
    'On the Analytical Engine, part one.',
    'On the Analytical Engine, part two — «notes» with "quotes".',
    'Poetical science.',
  ]
    .map((content, i) => JSON.stringify({ alias: 'ada-lovelace', label: `essay-${i + 1}`, content }))
    .join('\n'),
);
await facectl(['docs', 'submit', '--file', batch, '--concurrency', '2'], {
  show: 'facectl docs submit --file batch.ndjson --concurrency 2',
});
const imported = JSON.parse(
  await facectl(['import', 'ada-lovelace', pageUrl, '--perspective', 'third-person', '--json']),
);
await facectl(['docs', 'sync', imported.document_id, '--wait']);
const thread = JSON.parse(
  await facectl(['threads', 'create', '--alias', 'ada-lovelace', '--label', 'interview-1', '--json']),
);
const messages = join(work, 'messages.json');
writeFileSync(
  messages,
  JSON.stringify([
    { role: 'user', content: 'What drew you to the Analytical Engine?', from: 'interviewer' },
    { role: 'assistant', content: 'Its promise to weave algebraic patterns, as the loom weaves flowers.', from: 'ada' },
  ]),
);
await facectl(['threads', 'replace-messages', thread.thread_id, '--file', messages], {
  show: `facectl threads replace-messages ${thread.thread_id} --file messages.json`,
});
await facectl(['threads', 'sync', thread.thread_id, '--wait']);
console.log(dim('\n(billing source above: credits — the Connect plan has no compile quota and no connection yet)'));

await facectl(['oauth', 'list']);
let approved = false;
await facectl(['oauth', 'connect', 'example', '--no-browser', '--timeout', '30'], {
  during: (stderr) => {
    const url = /https?:\/\/\S+\/provider\/\S+/.exec(stderr)?.[0];
    if (url && !approved) {
      approved = true;
      approveInBrowser(url).catch((error) => console.error('demo: approving failed:', error));
    }
  },
});
await facectl(['oauth', 'list']);
const second = JSON.parse(
  await facectl(['threads', 'create', '--alias', 'ada-lovelace', '--label', 'interview-2', '--json']),
);
await facectl(['threads', 'replace-messages', second.thread_id, '-'], {
  stdin: JSON.stringify({
    messages: [{ role: 'user', content: 'And now, on your own account?', from: 'interviewer' }],
  }),
  show: `echo '{"messages": [...]}' | facectl threads replace-messages ${second.thread_id} -`,
});
await facectl(['threads', 'sync', second.thread_id, '--json']);
console.log(dim('\n(billing source above: oauth — the connected account pays for compile interviews)'));
await facectl(['oauth', 'disconnect', 'example', '--yes']);

console.log('\nDemo finished: every command above ran against the embedded local service.');
await shutdown(0);
