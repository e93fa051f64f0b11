// One contender of a `serve --data FILE` race (test/reliability/service-bounds.test.ts, case 43):
//   node serve-contender.mjs <bin> <data file> <round dir> <contenders> <writes> <tag>
// Starts `facectl serve --data FILE --port 0 --json` and reports on stdout one JSON line:
//   {"running": false, "code": N, "stderr": "..."}                 when serve refused to start, or
//   {"running": true, "created": [alias, ...], "code": N}          when it ran.
// A serve that runs waits until every contender of the round has decided (started or refused; each
// leaves a marker file in <round dir>), so that all of them meet while it holds the file; then it
// creates <writes> faces, keeps the aliases answered 201, and stops the service with SIGTERM.
import { spawn } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [bin, dataFile, roundDir, contendersText, writesText, tag] = process.argv.slice(2);
const contenders = Number(contendersText);
const writes = Number(writesText);

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', NO_COLOR: '1' };
const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--json', '--data', dataFile], {
  env,
  stdio: ['ignore', 'pipe', 'pipe'],
});
let stdout = '';
let stderr = '';
child.stderr.on('data', (chunk) => (stderr += chunk));
const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));

const first = await new Promise((resolve) => {
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
    const newline = stdout.indexOf('\n');
    if (newline >= 0) resolve(stdout.slice(0, newline));
  });
  child.once('exit', () => resolve(null));
});

const decided = (state) => writeFileSync(join(roundDir, `${state}-${process.pid}`), '');

if (first === null) {
  decided('refused');
  console.log(JSON.stringify({ running: false, code: await exited, stderr }));
  process.exit(0);
}

decided('running');
const deadline = Date.now() + 60_000;
while (readdirSync(roundDir).length < contenders && Date.now() < deadline) {
  await new Promise((resolve) => setTimeout(resolve, 5));
}

const { base_url: baseUrl, users } = JSON.parse(first);
const key = users.find((u) => u.plan === 'pro').key;
const created = [];
/** What a write that was not answered 201 got instead, for the test's message. */
const failed = [];
for (let n = 0; n < writes; n++) {
  const alias = `${tag}-${process.pid}-${n}`;
  try {
    const res = await fetch(`${baseUrl}/v1/faces`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Contender', alias }),
    });
    if (res.status === 201) created.push(alias);
    else failed.push(`${alias}: ${res.status} ${await res.text()}`);
  } catch (error) {
    // not answered: not counted as created
    failed.push(`${alias}: ${error?.cause?.message ?? error?.message ?? error}`);
  }
}
child.kill('SIGTERM');
const code = await exited;
console.log(JSON.stringify({ running: true, created, failed, code, stderr: failed.length > 0 ? stderr : undefined }));
