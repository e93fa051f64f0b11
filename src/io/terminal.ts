import type { GlobalOptions, IO } from '../context.js';

export type Env = Readonly<Record<string, string | undefined>>;

/** True when the variable is set to anything but empty, `0` or `false` (how CI systems set CI). */
export function envFlag(env: Env, name: string): boolean {
  const value = env[name];
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false';
}

export function colorEnabled(env: Env, isTTY: boolean): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined) return force !== '0' && force.toLowerCase() !== 'false';
  return isTTY && env.TERM !== 'dumb' && !envFlag(env, 'CI');
}

/** The `…IsTTY` flags, else the streams' isTTY: tests flag buffer streams as terminals. */
export type IOStreams = Pick<IO, 'stdin' | 'stdout' | 'stderr'> &
  Partial<Pick<IO, 'stdinIsTTY' | 'stdoutIsTTY' | 'stderrIsTTY'>>;

/** canPrompt() reads globals at call time: `--no-input` is known only once commander has parsed the line. */
export function createIO(streams: IOStreams, env: Env, globals: GlobalOptions): IO {
  const stdinIsTTY = streams.stdinIsTTY ?? Boolean(streams.stdin.isTTY);
  const stdoutIsTTY = streams.stdoutIsTTY ?? Boolean(streams.stdout.isTTY);
  const stderrIsTTY = streams.stderrIsTTY ?? Boolean(streams.stderr.isTTY);
  return {
    ...streams,
    stdinIsTTY,
    stdoutIsTTY,
    stderrIsTTY,
    color: colorEnabled(env, stdoutIsTTY),
    stderrColor: colorEnabled(env, stderrIsTTY),
    // Questions are drawn on stderr: one sent elsewhere (`2>log`) would wait for an answer to a question not seen.
    canPrompt: () => stdinIsTTY && stdoutIsTTY && stderrIsTTY && !globals.noInput && !envFlag(env, 'CI'),
  };
}
