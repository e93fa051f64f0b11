#!/usr/bin/env node
// `node bench/baseline.mjs DIR`: builds commit d245c82 into DIR, for bench/run.mjs --baseline DIR (the
// row that times one API command against where the project stood then, issue 23). The commit's files
// come from this repository's history (git archive), its dependencies from its own package-lock.json.
// A DIR that already holds the build is left as it is. Not needed by CI: without it the row says
// "not available".
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const COMMIT = 'd245c82';
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = process.argv[2];
if (!target) {
  process.stderr.write('usage: node bench/baseline.mjs DIR  (then: node bench/run.mjs --baseline DIR)\n');
  process.exit(2);
}
const dir = resolve(target);
const bin = join(dir, 'bin', 'facectl.js');
if (existsSync(bin) && existsSync(join(dir, 'dist', 'cli.js'))) {
  process.stdout.write(`${dir} already holds a build of ${COMMIT}\n`);
  process.exit(0);
}
const step = (command, args, cwd) => {
  process.stderr.write(`baseline: ${command} ${args.join(' ')}\n`);
  execFileSync(command, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'] });
};
try {
  execFileSync('git', ['-C', root, 'cat-file', '-e', `${COMMIT}^{commit}`], { stdio: 'ignore' });
} catch {
  process.stderr.write(`baseline: commit ${COMMIT} is not in this clone (a shallow clone? git fetch --unshallow)\n`);
  process.exit(1);
}
mkdirSync(dir, { recursive: true });
execFileSync('sh', ['-c', `git -C "$1" archive "$2" | tar -x -C "$3"`, 'sh', root, COMMIT, dir], {
  stdio: ['ignore', 'inherit', 'inherit'],
});
step('npm', ['ci', '--no-audit', '--no-fund'], dir);
step(process.execPath, ['scripts/build.mjs', '--no-types'], dir);
process.stdout.write(`built ${COMMIT} in ${dir}: node bench/run.mjs --baseline ${dir}\n`);
