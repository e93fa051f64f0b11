import { accessSync, constants, readlinkSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Flags } from './verb.js';

const errnoOf = (error: unknown) => (error as NodeJS.ErrnoException).code;

/**
 * The real file a --data path stands for, through links (to a file yet to be made too), so the WAL lives beside it
 * and a link stays a link; else the real directory plus the name to create; else the path as it is.
 */
export function realDataPath(file: string): string {
  let path = file;
  for (let hops = 0; hops < 40; hops += 1) {
    try {
      return realpathSync(path);
    } catch (error) {
      if (errnoOf(error) !== 'ENOENT') return path;
    }
    const target = attempt(() => readlinkSync(path));
    // Not a link: a file serve creates, in the real directory.
    if (target === undefined) return attempt(() => join(realpathSync(dirname(path)), basename(path))) ?? path;
    path = resolve(dirname(path), target);
  }
  return path;
}

/**
 * What stops serve from keeping its state at `file`: it may be missing, but its directory must exist (a typo would
 * leave directories behind) and take new files (SQLite's `FILE-wal`, an import's `FILE.importing`).
 */
export function dataFileProblem(file: string): string | undefined {
  const dir = dirname(file);
  const said = (what: string) => `${file}: ${what}`;
  let exists = true;
  try {
    const stat = statSync(file);
    if (stat.isDirectory()) return said(`is a directory; give a file path, e.g. ${resolve(file, 'state.db')}`);
    if (!stat.isFile()) return said('is not a regular file');
    // SQLite finds its log by the name it opens (FILE-wal): under another name a kill -9's writes are lost at the next
    // checkpoint. FILE.imported (of an import cut short) is the one second name serve makes itself.
    if (stat.nlink > 1 && !(stat.nlink === 2 && attempt(() => statSync(`${file}.imported`))?.ino === stat.ino)) {
      return said(
        `has ${stat.nlink} names (hard links); serve needs a file with one name, as its log is found by ` +
          'name: give one of them, or a copy, after removing the other names',
      );
    }
  } catch (error) {
    const code = errnoOf(error);
    if (code === 'ENOTDIR') return said(`${nonDirectory(dir)} is not a directory`);
    if (code === 'EACCES') return said('cannot be reached (permission denied on a directory of the path)');
    if (code !== 'ENOENT') return said((error as Error).message);
    exists = false;
    try {
      if (!statSync(dir).isDirectory()) return said(`${dir} is not a directory`);
    } catch (error) {
      if (errnoOf(error) === 'ENOENT') return said(`the directory ${dir} does not exist (serve does not create it)`);
      return said((error as Error).message);
    }
  }
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (error) {
    return said(`cannot create files in ${dir} (${reason(error)})`);
  }
  if (exists) {
    try {
      accessSync(file, constants.R_OK | constants.W_OK);
    } catch (error) {
      return said(`cannot read and write it (${reason(error)})`);
    }
  }
  return undefined;
}

/** What `read` returns, or undefined where it throws. */
function attempt<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/** The part of `dir` (from the root down) that exists and is not a directory: what ENOTDIR is about. */
function nonDirectory(dir: string): string {
  const parts: string[] = [];
  for (let at = dir; !parts.includes(at); at = dirname(at)) parts.unshift(at);
  return parts.find((part) => attempt(() => statSync(part))?.isDirectory() === false) ?? dir;
}

const reason = (error: unknown) =>
  ({ EACCES: 'permission denied', EPERM: 'permission denied', EROFS: 'read-only file system' })[errnoOf(error) ?? ''] ??
  (error as Error).message;

/** A whole number from `min` to `max`, written in digits only: the message quotes what was given. */
const wholeNumber = (min: number, max: number, rule: string) => (text: string) =>
  /^\d{1,9}$/.test(text) && Number(text) >= min && Number(text) <= max ? undefined : `${rule}, got "${text}"`;

export const SERVE_FLAGS = {
  host: {
    value: '<host>',
    help: 'address to listen on',
    default: '127.0.0.1',
    check: (host: string) =>
      host.length > 0 && !/\s/.test(host) ? undefined : `not a host name or address: "${host}"`,
  },
  port: {
    value: '<port>',
    help: 'port to listen on (0 picks a free one)',
    default: '8787',
    check: wholeNumber(0, 65535, 'must be a whole number from 0 to 65535'),
  },
  data: {
    value: '<file>',
    help: 'keep the state in FILE, an SQLite database (created when missing; its directory must exist)',
    check: (data: string) => (data === '' ? 'needs a file path' : dataFileProblem(realDataPath(resolve(data)))),
  },
  allowPrivateUrls: { help: 'let import fetch loopback URLs (local testing only)' },
  oauthProvider: {
    value: '<name>',
    help: 'id of the local OAuth provider',
    default: 'example',
    check: (name: string) =>
      /^[a-z0-9][a-z0-9_-]{0,63}$/.test(name)
        ? undefined
        : `must be lower-case letters, digits, - or _ (at most 64), got "${name}"`,
  },
  rateLimit: {
    value: '<n>',
    help: 'requests per second per key (429 with Retry-After past it)',
    check: wholeNumber(1, 999_999_999, 'must be a whole number of requests per second, 1 or more'),
  },
  consent: {
    value: '<answer>',
    help: 'who answers OAuth consent: page (a person, in a browser), or approve or deny at once (scripts, CI)',
    choices: ['page', 'approve', 'deny'],
    default: 'page',
  },
} as const satisfies Flags;
