// Regenerates the committed shell completion scripts in completions/ from the built CLI's command tree
// (`npm run completions` builds first). test/unit/completion.test.ts fails when they drift.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const files = { bash: 'completions/facectl.bash', zsh: 'completions/_facectl', fish: 'completions/facectl.fish' };
for (const [shell, file] of Object.entries(files)) {
  const script = execFileSync(process.execPath, [`${root}/bin/facectl.js`, 'completion', shell], {
    env: { PATH: process.env.PATH, NO_COLOR: '1' },
    encoding: 'utf8',
  });
  writeFileSync(`${root}/${file}`, script);
  console.log(`wrote ${file}`);
}
