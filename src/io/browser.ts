import type { Browser } from '../context.js';
import { type Env, envFlag } from './terminal.js';

/** Starts an opener command; resolves with its exit code, 'running' if it is still going after waitMs. */
export type Launch = (command: string, args: string[], waitMs: number) => Promise<number | 'running'>;

/**
 * An absolute http: or https: URL: all an opener is given (never file:, javascript:, or an option such as `-x`),
 * with no white space or control character (the URL parser drops or encodes them; printed, a newline makes a line).
 */
export const isWebUrl = (text: string): boolean => /^https?:\/\/[^\s\p{Cc}]+$/iu.test(text) && URL.canParse(text);

/** No try where no browser can appear (CI, SSH, no display); a failing xdg-open makes open() resolve false. */
export function createSystemBrowser(
  env: Env,
  platform: NodeJS.Platform = process.platform,
  launch: Launch = async (command, args, waitMs) => {
    const { spawn } = await import('node:child_process');
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, { stdio: 'ignore', detached: true, env: { ...env } });
      const timer = setTimeout(() => {
        child.unref();
        resolve('running');
      }, waitMs);
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve(code ?? 1);
      });
    });
  },
): Browser & { unavailable(): string | undefined } {
  const unavailable = (): string | undefined => {
    if (envFlag(env, 'CI')) return 'CI is set';
    if (env.SSH_CONNECTION || env.SSH_TTY) return 'this is an SSH session';
    if (platform === 'linux' && !env.DISPLAY && !env.WAYLAND_DISPLAY) return 'no DISPLAY or WAYLAND_DISPLAY is set';
    return undefined;
  };
  return {
    unavailable,
    async open(url) {
      if (unavailable() || !isWebUrl(url)) return false;
      try {
        if (platform === 'linux') {
          const result = await launch('xdg-open', [url], 3000);
          return result === 'running' || result === 0;
        }
        const { default: open } = await import('open');
        await open(url);
        return true;
      } catch {
        return false;
      }
    },
  };
}
