import type { ChalkInstance } from 'chalk';
import { Help } from 'commander';
import type CliTable3 from 'cli-table3';
import type oraFactory from 'ora';
import type { GlobalOptions, IO, Output, Paint, ProgressBar, Spinner } from '../context.js';
import { CliError, holdsKey, UsageError, withoutKeys } from '../errors.js';
import type { JqFilter } from './jq.js';
import { type Env, envFlag } from './terminal.js';

/** The rendering libraries (and the --jq filter), imported only when this invocation will use them. */
export type RenderModules = {
  jq?: JqFilter;
  Table?: typeof CliTable3;
  /** cli-table3's word wrap: a cell's text as the lines of its column's width. */
  wrap?: (width: number, text: string) => string[];
  /** cli-table3's measure of the columns a text takes (a CJK character two). */
  width?: (text: string) => number;
  chalk?: ChalkInstance;
  ora?: typeof oraFactory;
};

/** Service text safe for a terminal (case 51): C0 but \n and \t, C1, bidi, zero-width and line separators escaped. */
export function visible(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    if (c === '\r') return '\\r';
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g;

/** JSON with DEL, C1 and the invisible characters above as \u escapes (JSON.stringify escapes only C0). */
export const safeJson = (value: unknown): string => safeJsonText(JSON.stringify(value));

const safeJsonText = (json: string) =>
  json.replace(INVISIBLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
const INVISIBLE = /[\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g;

/** A message for stderr, wrapped at words to a terminal's width (commander's wrapping, as help pages are). */
export function wrapForTerminal(io: Pick<IO, 'stderr' | 'stderrIsTTY'>, text: string): string {
  const columns = io.stderrIsTTY ? io.stderr.columns : undefined;
  if (!columns || text.length <= columns) return text;
  // commander leaves text below 40 columns as it is; help pages wrap down to 20 (program.ts).
  return Object.assign(new Help(), { minWidthToWrap: 20 }).boxWrap(text, columns - 1);
}

/** A --json document is indented for a person at a terminal, one line when piped, as gh does. */
export const jsonIndent = (io: Pick<IO, 'stdoutIsTTY'>): number => (io.stdoutIsTTY ? 2 : 0);

const idle: Spinner & ProgressBar = { update() {}, stop() {} };

/** Data on stdout (JSON under --json, a table on a terminal, TSV piped), messages on stderr; globals read when used. */
export function createOutput(io: IO, env: Env, globals: GlobalOptions, modules: RenderModules = {}): Output {
  const loaded: RenderModules = { ...modules };
  const toTable = () => io.stdoutIsTTY && !globals.json;
  // Not on a terminal of 0 columns (a pseudo-terminal with no size, under `script`): ora divides by it.
  const animate = () =>
    io.stderrIsTTY && (io.stderr.columns ?? 1) > 0 && !globals.json && !envFlag(env, 'CI') && env.TERM !== 'dumb';
  const paint = (color: boolean, style: Paint | 'bold' | 'dim', text: string) =>
    color && loaded.chalk ? loaded.chalk[style](text) : text;
  const out = (text: string) => void io.stdout.write(text);
  const err = (text: string) => void io.stderr.write(withoutKeys(text));
  let lastWritten: string | undefined;
  const document = (json: string, compact: boolean, written?: string, streamed = false) => {
    if (globals.jq === undefined) return out(`${io.stdoutIsTTY ? safeJsonText(json) : json}\n`);
    if (!loaded.jq) throw new UsageError('--jq does not apply to this command', { code: 'invalid_jq' });
    try {
      const result = loaded.jq.apply(json, compact || !io.stdoutIsTTY, streamed);
      out(io.stdoutIsTTY ? visible(result) : result);
    } catch (error) {
      if (!(error instanceof CliError) || error.code !== 'jq_error') throw error;
      // jq's message may quote a key the answer holds, cut or changed past what redaction finds (`.key[13:] | error`).
      const secret = holdsKey(json);
      if (written === undefined && !secret) throw error;
      const message = secret
        ? "--jq: the filter failed (jq's message is not shown: the answer holds a key it may quote)"
        : error.message;
      // A filter that failed on the answer to a change: the change was made all the same.
      throw new CliError(message, error.exitCode, { code: error.code, hint: written ?? error.hint });
    }
  };
  // Under --json each stderr line is JSON: messages are held to the end, written on success, else in the error.
  const held: { text: string; label?: 'warning:' }[] = [];
  const jsonLine = (text: string, label?: 'warning:') => err(`${safeJson({ [label ? 'warning' : 'notice']: text })}\n`);
  // A progress bar being redrawn on stderr's last line: a message clears it first, or they share the line.
  let barDrawn = false;
  // Colour goes on the label only: the text may carry the service's words, made visible.
  const labelled = (label: string, style: 'green' | 'yellow', text: string) =>
    `${paint(io.stderrColor ?? false, style, label)}${wrapForTerminal(io, `${label} ${visible(text)}`).slice(label.length)}`;
  const message = (text: string, immediate = false, label?: 'warning:') => {
    if (globals.json && !immediate) held.push(label ? { text, label } : { text });
    else if (globals.json) jsonLine(text, label);
    else {
      const line = label ? labelled(label, 'yellow', text) : wrapForTerminal(io, visible(text));
      err(`${barDrawn ? '\r\x1b[2K' : ''}${line}\n`);
      barDrawn = false;
    }
  };

  const table = (head: string[] | undefined, rows: string[][]) => {
    // prepare() loaded cli-table3, its wrap and its measure (commands/declare.ts).
    const width = loaded.width as NonNullable<RenderModules['width']>;
    const colWidths = fittedWidths(head ? [head, ...rows] : rows, io.stdout.columns, width);
    // A word wider than its column (a path) is broken over lines, not cut short (cli-table3 would cut a painted one
    // without its closing code, and the terminal stayed dim; a word of CJK text it cut, an emoji it split); a
    // painted cell is painted again on each of its lines.
    const fit = (text: string, i: number) => {
      const room = (colWidths?.[i] ?? 0) - GAP;
      const [, open = '', inner = text, close = ''] = /^(\x1b\[\d+m)?([^]*?)(\x1b\[\d+m)?$/.exec(text) ?? [];
      const broken = inner.replace(/\S+/g, (word) => (width(word) > room ? breakWord(word, room, width) : word));
      return open === '' ? broken : broken.replace(/^.*$/gm, (line) => `${open}${line}${close}`);
    };
    const t = new (loaded.Table as typeof CliTable3)({
      ...(head ? { head: head.map((h) => paint(io.color, 'bold', h)) } : {}),
      chars: BORDERLESS,
      style: { head: [], border: [], 'padding-left': 0, 'padding-right': 2 },
      ...(colWidths ? { colWidths } : {}),
    });
    // Each line of a cell goes in a row of its own, wrapped here by cli-table3's own wrap: drawing a cell of many
    // lines, cli-table3 measures the whole cell again for each line (a 20,000-character message held the terminal
    // for minutes, deaf to Ctrl-C); borderless, the rows look as the one cell did.
    const wrap = loaded.wrap as NonNullable<RenderModules['wrap']>;
    for (const row of rows) {
      const cells = row.map((text, i) =>
        colWidths ? wrap((colWidths[i] ?? 0) - GAP, fit(text, i)) : text.split('\n'),
      );
      const height = Math.max(...cells.map((lines) => lines.length));
      for (let k = 0; k < height; k++) t.push(cells.map((lines) => lines[k] ?? ''));
    }
    out(`${t.toString().replace(/ +$/gm, '')}\n`);
  };

  return {
    get json() {
      return globals.json;
    },
    get written() {
      return lastWritten;
    },
    record(value, fields, written) {
      lastWritten = written;
      if (globals.json) return document(JSON.stringify(value, null, jsonIndent(io)), false, written);
      const rows = fields ? fields.map((c) => [c.header, c.value(value)] as const) : Object.entries(value);
      if (toTable()) {
        const cells = rows.map(([header, v]) => [header, cell(v)] as const);
        // A word that cannot stand whole beside the names (an id or a new key at 40 columns) would be broken, and
        // copied broken: then each value goes under its name, wrapped at spaces, an ASCII word wider than the terminal
        // left whole for the terminal to wrap (copied, it is one line); CJK text or emoji broken between characters.
        const width = loaded.width as NonNullable<RenderModules['width']>;
        const columns = io.stdout.columns ?? Infinity;
        const beside = columns - 1 - GAP * 2 - Math.max(...cells.map(([h]) => width(h)));
        if (!cells.some(([, v]) => v.split(/\s+/).some((word) => width(word) > beside)))
          return table(
            undefined,
            cells.map(([header, v]) => [paint(io.color, 'dim', header), v]),
          );
        const wrap = loaded.wrap as NonNullable<RenderModules['wrap']>;
        const room = columns - 1 - GAP;
        for (const [header, v] of cells) {
          const broken = v.replace(/\S*[^\x21-\x7e\s]\S*/g, (word) =>
            width(word) > room ? breakWord(word, room, width) : word,
          );
          const lines = broken.split('\n').flatMap((line) => wrap(room, line));
          out(`${paint(io.color, 'dim', header)}\n${lines.map((line) => `  ${line}\n`).join('')}`);
        }
        return;
      }
      for (const [header, v] of rows) out(`${header}\t${tsvCell(v)}\n`);
    },
    list(rows, columns) {
      if (globals.json) return document(JSON.stringify(rows, null, jsonIndent(io)), false);
      if (toTable()) {
        if (rows.length === 0) return err('no results\n');
        return table(
          columns.map((c) => c.header.toUpperCase()),
          rows.map((row) =>
            columns.map((c) => {
              const text = cell(c.value(row));
              const style = c.style?.(text);
              return style ? paint(io.color, style, text) : text;
            }),
          ),
        );
      }
      for (const row of rows) out(`${columns.map((c) => tsvCell(c.value(row))).join('\t')}\n`);
    },
    line: (value) => document(JSON.stringify(value), true, undefined, true),
    text(text, written) {
      lastWritten = written;
      // JSON printed as text (`facectl api`, `openapi`, a batch's NDJSON blocks) goes through --jq too.
      // NDJSON is a stream of results: the signal handlers stay through its jq runs (jq.ts).
      if (globals.jq !== undefined && isNdjson(text)) return document(text.trimEnd(), true, written, true);
      if (globals.jq !== undefined && parsedOrUndefined(text) !== undefined)
        return document(text.trimEnd(), false, written);
      // Raw text (an API answer that is not JSON) is made visible only where a terminal would act on it.
      out(io.stdoutIsTTY ? visible(text) : text);
    },
    success(message) {
      if (io.stderrIsTTY && !globals.json) err(`${labelled('✓', 'green', message)}\n`);
    },
    done(text, result, written) {
      lastWritten = written;
      if (globals.json) document(JSON.stringify(result, null, jsonIndent(io)), false, written);
      else if (io.stderrIsTTY) this.success(text);
      else message(text);
    },
    info: (text, options) => message(text, options?.immediate),
    warn: (text, options) => message(text, options?.immediate, 'warning:'),
    flush() {
      for (const { text, label } of held.splice(0)) jsonLine(text, label);
    },
    takeHeld: () => held.splice(0).map(({ text, label }) => (label ? `${label} ${text}` : text)),
    spinner(text) {
      if (!animate() || !loaded.ora) return idle;
      const spinner = loaded.ora({ text, stream: io.stderr, isEnabled: true, discardStdin: false }).start();
      return { update: (next) => void (spinner.text = next), stop: () => void spinner.stop() };
    },
    progress(label) {
      if (animate()) {
        return {
          update(completed, total, text) {
            // Within the terminal's width (less its last column, where some wrap): a wider line is a new line at
            // each redraw. The bar gives way first, then the end of the text.
            const tail = ` ${completed}/${total}${text ? ` ${text}` : ''}`;
            const room = (io.stderr.columns ?? 80) - 1;
            const width = Math.max(0, Math.min(24, room - label.length - 1 - tail.length));
            const filled = Math.round((total > 0 ? Math.min(1, completed / total) : 0) * width);
            const bar = width > 0 ? ` ${'█'.repeat(filled)}${'░'.repeat(width - filled)}` : '';
            err(`\r\x1b[2K${`${label}${bar}${tail}`.slice(0, room)}`);
            barDrawn = true;
          },
          stop() {
            if (barDrawn) err('\n');
            barDrawn = false;
          },
        };
      }
      // Without a terminal: nothing under --json; otherwise a line at each quarter, for CI logs.
      if (globals.json) return idle;
      let lastQuarter = -1;
      return {
        update(completed, total, text) {
          const quarter = total > 0 ? Math.floor((Math.min(completed, total) / total) * 4) : 0;
          if (quarter === lastQuarter) return;
          lastQuarter = quarter;
          err(`${label}: ${completed}/${total}${text ? ` ${text}` : ''}\n`);
        },
        stop() {},
      };
    },
    async prepare() {
      const load = async <K extends keyof RenderModules>(key: K, get: () => Promise<RenderModules[K]>) => {
        loaded[key] ??= await get();
      };
      const expression = globals.jq;
      await Promise.all([
        expression !== undefined && load('jq', async () => (await import('./jq.js')).loadJq(expression)),
        toTable() &&
          (async () => {
            const parts = await import('./table-parts.js');
            loaded.Table ??= parts.Table;
            loaded.wrap ??= parts.wrap;
            loaded.width ??= parts.width;
          })(),
        (io.color || !!io.stderrColor) && load('chalk', async () => new (await import('chalk')).Chalk({ level: 1 })),
        animate() && load('ora', async () => (await import('ora')).default),
      ]);
    },
  };
}

const GAP = 2; // cli-table3's padding-right above

/** Column widths (gap included) fitting a table into `columns`, or undefined when it fits (docs/decisions.md). */
export function fittedWidths(
  rows: readonly string[][],
  columns: number | undefined,
  width: (text: string) => number,
): number[] | undefined {
  if (!columns || rows.length === 0) return undefined;
  const count = Math.max(...rows.map((row) => row.length));
  const measure = (of: (text: string) => number[]) =>
    Array.from({ length: count }, (_, i) => Math.max(0, ...rows.flatMap((row) => of(row[i] ?? ''))));
  const widths = measure((text) => text.split('\n').map(width));
  const room = columns - 1 - GAP * count;
  let floors = measure((text) => text.split(/\s+/).map(width)).map((word) => Math.max(word, 6));
  // When the longest words alone do not fit, columns go narrower than them (table() breaks such words).
  if (floors.reduce((sum, floor) => sum + floor, 0) > room) floors = floors.map(() => 6);
  let total = widths.reduce((sum, width) => sum + width, 0);
  if (total <= room) return undefined;
  while (total > room) {
    let widest = -1;
    for (let i = 0; i < count; i++) {
      const spare = (widths[i] ?? 0) - (floors[i] ?? 0);
      if (spare > 0 && (widest < 0 || (widths[i] ?? 0) > (widths[widest] ?? 0))) widest = i;
    }
    if (widest < 0) break;
    widths[widest] = (widths[widest] ?? 0) - 1;
    total--;
  }
  return widths.map((width) => width + GAP);
}

/**
 * A word wider than `room` as lines of at most `room` columns, broken between characters (code points: never inside
 * one; Intl.Segmenter's graphemes took 31 s for a word of 200,000 characters).
 */
function breakWord(word: string, room: number, width: (text: string) => number): string {
  const lines: string[] = [];
  let line = '';
  let taken = 0;
  for (const char of word) {
    const w = char < '\x7f' ? 1 : width(char);
    if (taken + w > room && line !== '') {
      lines.push(line);
      line = '';
      taken = 0;
    }
    line += char;
    taken += w;
  }
  return [...lines, line].join('\n');
}

const BORDERLESS = Object.fromEntries(
  'top top-mid top-left top-right bottom bottom-mid bottom-left bottom-right left left-mid mid mid-mid right right-mid middle'
    .split(' ')
    .map((key) => [key, '']),
);

/** JSON.parse's value, or undefined for text that is not JSON (JSON.parse never gives undefined). */
export function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isNdjson(text: string): boolean {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  return lines.length > 0 && lines.every((line) => parsedOrUndefined(line) !== undefined);
}

/** A value as a table shows it: a tab, which a terminal expands past the column's width, is a space. */
function cell(value: unknown): string {
  if (value === null || value === undefined) return ABSENT;
  if (Array.isArray(value))
    return visible(value.map((item) => (typeof item === 'object' ? safeJson(item) : String(item))).join(', '));
  if (typeof value === 'object') return safeJson(value);
  return visible(String(value)).replace(/\t/g, ' ');
}

export const ABSENT = '—';

function tsvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map((item) => tsvCell(item)).join(',');
  return cell(value).replace(/[\t\n]+/g, ' ');
}
