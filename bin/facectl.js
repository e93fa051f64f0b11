#!/usr/bin/env node
// The installed entry point: load the built CLI and hand its exit code to Node. First, where Node has
// one (22.1 and later; not Node 20), it turns on V8's compile cache in the user's cache directory, so a
// run reuses the code compiled for dist/ by the previous one instead of parsing it again. A cache that
// cannot be made or written is no failure: Node then compiles as usual. NODE_COMPILE_CACHE (another
// directory) and NODE_DISABLE_COMPILE_CACHE=1 still apply. Built-in modules are taken with
// process.getBuiltinModule, not imported: each import of one costs `facectl --version` time.
const { enableCompileCache } = process.getBuiltinModule('node:module');
const { NODE_COMPILE_CACHE, NODE_DISABLE_COMPILE_CACHE } = process.env;
if (typeof enableCompileCache === 'function' && !NODE_COMPILE_CACHE && !NODE_DISABLE_COMPILE_CACHE) {
  try {
    enableCompileCache(compileCacheDir());
  } catch {
    // no usable cache directory: run without the cache
  }
}

const { runFromProcess } = await import('../dist/cli.js');
process.exitCode = await runFromProcess();

/**
 * <user cache dir>/facectl/compile-cache, made one level at a time below a cache directory that must
 * already exist: a recursive mkdir never returns on some file systems (a path under /proc), and the
 * cache is not worth a hang. Per user, not a shared temporary directory: it holds code this process runs.
 */
function compileCacheDir() {
  const { mkdirSync, statSync } = process.getBuiltinModule('node:fs');
  const { homedir } = process.getBuiltinModule('node:os');
  const { join } = process.getBuiltinModule('node:path');
  const env = process.env;
  let root;
  if (process.platform === 'win32') root = env.LOCALAPPDATA || join(homedir(), 'AppData', 'Local');
  else if (process.platform === 'darwin') root = join(homedir(), 'Library', 'Caches');
  else root = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  if (!statSync(root).isDirectory()) throw new Error(`not a directory: ${root}`);
  let dir = root;
  for (const part of ['facectl', 'compile-cache']) {
    dir = join(dir, part);
    try {
      mkdirSync(dir);
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
  }
  return dir;
}
