import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from './temp.js';

/**
 * What a run of the bin loads: NODE_OPTIONS that report on stderr every module file loaded as an ES
 * module (`LOADED file://…`), and at exit the files required as CommonJS (`REQUIRED …`: the bin and
 * dist/cli.cjs, which the ES loader's hooks do not see) and the built-in modules (`BUILTINS …`);
 * `traced` reads them back.
 */

export function tracing(): { NODE_OPTIONS: string } {
  const dir = makeTempDir('facectl-trace-');
  writeFileSync(
    join(dir, 'hooks.mjs'),
    `import { writeSync } from 'node:fs';
export async function load(url, context, next) {
  if (url.startsWith('file:')) writeSync(2, 'LOADED ' + url + '\\n');
  return next(url, context);
}
`,
  );
  writeFileSync(
    join(dir, 'trace.mjs'),
    `import module, { register } from 'node:module';
import { writeSync } from 'node:fs';
register('./hooks.mjs', import.meta.url);
process.on('exit', () => {
  for (const file of Object.keys(module._cache)) writeSync(2, 'REQUIRED ' + file + '\\n');
  writeSync(2, 'BUILTINS ' + process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13)).join(' ') + '\\n');
});
`,
  );
  return { NODE_OPTIONS: `--import ${join(dir, 'trace.mjs')}` };
}

/** The files loaded (less the tracer's own), the built-in modules, and the rest of stderr. */
export function traced(stderr: string): { files: string[]; builtins: string[]; rest: string } {
  const loaded = [...stderr.matchAll(/^LOADED file:\/\/(.+)$/gm)].map((m) => m[1] as string);
  const required = [...stderr.matchAll(/^REQUIRED (.+)$/gm)].map((m) => m[1] as string);
  const files = [...new Set([...loaded, ...required])];
  const builtins = (/^BUILTINS (.*)$/m.exec(stderr)?.[1] ?? '').split(' ');
  const rest = stderr.replace(/^(LOADED|REQUIRED|BUILTINS) .*\n/gm, '');
  return { files: files.filter((file) => !/\/facectl-trace-[^/]+\/(hooks|trace)\.mjs$/.test(file)), builtins, rest };
}
