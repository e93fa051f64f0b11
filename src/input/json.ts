import { UsageError } from '../errors.js';

/** JSON parsing whose errors name the line and column of the first problem (locateJsonError: docs/decisions.md). */

export type JsonParseResult =
  { ok: true; value: unknown } | { ok: false; line: number; column: number; offset: number; reason: string };

export function tryParseJson(text: string): JsonParseResult {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    const { offset, reason } = locateJsonError(text);
    const before = text.slice(0, offset);
    const lineStart = before.lastIndexOf('\n') + 1;
    let line = 1;
    for (let at = before.indexOf('\n'); at !== -1; at = before.indexOf('\n', at + 1)) line++;
    return { ok: false, line, column: offset - lineStart + 1, offset, reason };
  }
}

/** `line N: problem`; a problem at a column of the line (`column C: ...`) reads `line N, column C: ...`, as parseJson says it. */
export const atLine = (line: number, problem: string): string =>
  `line ${line}${problem.startsWith('column ') ? ', ' : ': '}${problem}`;

export function parseJson(text: string, where: { source: string; hint?: string | undefined }): unknown {
  const result = tryParseJson(text);
  if (result.ok) return result.value;
  const message = `${where.source}: line ${result.line}, column ${result.column}: invalid JSON: ${result.reason}`;
  throw new UsageError(message, { code: 'invalid_json', hint: where.hint });
}

/** Parses text that must hold one JSON object (not an array, string or number). */
export function parseJsonObject(text: string, where: Parameters<typeof parseJson>[1], what = 'a JSON object') {
  const value = parseJson(text, where);
  if (isPlainObject(value)) return value;
  const found = describeJsonValue(value);
  throw new UsageError(`${where.source}: line 1: expected ${what}, found ${found}`, { code: 'invalid_input' });
}

export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function describeJsonValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

export const UNEXPECTED_AFTER_VALUE = 'unexpected text after the JSON value';

type JsonProblem = { offset: number; reason: string };

/** Finds the first syntax error of a text that JSON.parse refused. */
export function locateJsonError(text: string): JsonProblem {
  let i = 0;
  const fail = (reason: string, at = i): never => {
    throw { offset: at, reason } satisfies JsonProblem;
  };
  const describe = (at: number) => (at >= text.length ? 'the text ends' : `unexpected ${JSON.stringify(text[at])}`);
  const skipSpace = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i] as string)) i++;
  };
  /** Steps over `char` when it comes next (after white space). */
  const next = (char: string): boolean => {
    skipSpace();
    if (text[i] !== char) return false;
    i++;
    return true;
  };
  const literal = (word: string) => {
    if (text.startsWith(word, i)) i += word.length;
    else fail(`${describe(i)} where a value was expected`);
  };
  const string = () => {
    const start = i;
    i++;
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return;
      }
      if (c < 0x20) fail('control character inside a string (escape it, e.g. \\n)');
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail('bad \\u escape in a string');
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else fail('bad escape in a string');
      } else i++;
    }
    fail('a string is not closed (the text ends inside it)', start);
  };
  const number = () => {
    const match = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!match || match[0] === '-' || match[0] === '') fail(`${describe(i)} where a value was expected`);
    i += (match as RegExpExecArray)[0].length;
  };
  const value = (depth: number): void => {
    if (depth > 1000) fail('nested too deeply');
    skipSpace();
    const c = text[i];
    if (c === '{') {
      i++;
      if (next('}')) return;
      for (;;) {
        skipSpace();
        if (text[i] !== '"') fail(`${describe(i)} where a property name in double quotes was expected`);
        string();
        if (!next(':')) fail(`${describe(i)} where ':' was expected`);
        value(depth + 1);
        if (next('}')) return;
        if (!next(',')) fail(`${describe(i)} where ',' or '}' was expected`);
      }
    } else if (c === '[') {
      i++;
      if (next(']')) return;
      for (;;) {
        value(depth + 1);
        if (next(']')) return;
        if (!next(',')) fail(`${describe(i)} where ',' or ']' was expected`);
      }
    } else if (c === '"') string();
    else if (c === 't') literal('true');
    else if (c === 'f') literal('false');
    else if (c === 'n') literal('null');
    else if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) number();
    else fail(`${describe(i)} where a value was expected`);
  };
  try {
    value(0);
    skipSpace();
    if (i < text.length) fail(UNEXPECTED_AFTER_VALUE);
  } catch (problem) {
    if (typeof problem === 'object' && problem !== null && 'reason' in problem) return problem as JsonProblem;
    throw problem;
  }
  // JSON.parse refused what the scanner accepts (should not happen): point at the start.
  return { offset: 0, reason: 'not valid JSON' };
}
