import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from './temp.js';

/**
 * What a run of the bin loads: NODE_OPTIONS that report on stderr every module file loaded
 * (`LOADED file://…`) and, at exit, the built-in modules (`BUILTINS …`); `traced` reads them back.
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
    `import { register } from 'node:module';
import { writeSync } from 'node:fs';
register('./hooks.mjs', import.meta.url);
process.on('exit', () => writeSync(2, 'BUILTINS ' + process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13)).join(' ') + '\\n'));
`,
  );
  return { NODE_OPTIONS: `--import ${join(dir, 'trace.mjs')}` };
}

/** The files loaded (less the tracer's own), the built-in modules, and the rest of stderr. */
export function traced(stderr: string): { files: string[]; builtins: string[]; rest: string } {
  const files = [...stderr.matchAll(/^LOADED file:\/\/(.+)$/gm)].map((m) => m[1] as string);
  const builtins = (/^BUILTINS (.*)$/m.exec(stderr)?.[1] ?? '').split(' ');
  const rest = stderr.replace(/^(LOADED|BUILTINS) .*\n/gm, '');
  return { files: files.filter((file) => !/\/facectl-trace-[^/]+\/(hooks|trace)\.mjs$/.test(file)), builtins, rest };
}
