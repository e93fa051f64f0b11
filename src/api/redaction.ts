import { withoutKeys } from '../errors.js';
import type { RawResponse } from './types.js';

/** A form of the key sent as an answer may quote it back, and what is shown in its place. */
export type SecretForm = [form: string, shown: string];

/**
 * The key sent, as an answer may quote it back (an error's detail, a field, a header such as a Location), and what
 * stands in its place: a service key's prefix, as everywhere, else [redacted] (another form, or too short to show a
 * part of). Its written forms come first, so no half of one stays: JSON's escapes (`\/` too, as PHP writes it), a
 * URL's percent-encoding; a service key's secret without its `fcs_` last. Not recognised: a key encoded on purpose
 * (base64, hex, reversed, cut in pieces).
 */
export function secretForms(secrets: string[]): SecretForm[] {
  const forms: SecretForm[] = [];
  for (const secret of secrets) {
    if (secret.length < 6) continue;
    const prefix = withoutKeys(secret);
    const shown = prefix === secret ? '[redacted]' : prefix;
    const escaped = JSON.stringify(secret).slice(1, -1);
    const written = [escaped.replaceAll('/', '\\/'), escaped, encodeURIComponent(secret)];
    for (const form of new Set(written)) if (form !== secret) forms.push([form, shown]);
    forms.push([secret, shown]);
    // A service key's secret without `fcs_`, or alone (after its id's `_`).
    if (prefix !== secret) forms.push([secret.slice(4), '[redacted]']);
    if (prefix !== secret && secret.length >= 13 + 16) forms.push([secret.slice(13), '[redacted]']);
  }
  return forms;
}

export const without = (secrets: SecretForm[], text: string): string => {
  const replaced = (from: string) => {
    for (const [form, shown] of secrets) if (from.includes(form)) from = from.replaceAll(form, shown);
    return from;
  };
  text = replaced(text);
  if (secrets.length === 0 || !text.includes('\\u')) return text;
  // JSON may spell any character as \u00XX (.NET writes + and = so): spelt plainly where that uncovers a key.
  const plain = text.replace(ESCAPED, (escape, code: string) => {
    const char = String.fromCharCode(Number.parseInt(code, 16));
    return char === '"' || char === '\\' || char === '\x7f' ? escape : char;
  });
  return secrets.some(([form]) => plain.includes(form)) ? replaced(plain) : text;
};

/** A \u escape of a printable ASCII character, not itself escaped (`\\u0041` is a backslash and `u0041`). */
const ESCAPED = /(?<=(?:^|[^\\])(?:\\\\)*)\\u00([2-7][0-9a-fA-F])/g;

/** The answer's headers, those quoting a secret (a Location, an echo) copied with it replaced. */
export function headersWithout(secrets: SecretForm[], headers: RawResponse['headers']): RawResponse['headers'] {
  let copy: RawResponse['headers'] | undefined;
  for (const name in headers) {
    const value = headers[name];
    if (typeof value === 'string') {
      const cleaned = without(secrets, value);
      if (cleaned !== value) (copy ??= { ...headers })[name] = cleaned;
    } else if (value !== undefined) {
      const cleaned = value.map((v) => without(secrets, v));
      if (cleaned.some((v, k) => v !== value[k])) (copy ??= { ...headers })[name] = cleaned;
    }
  }
  return copy ?? headers;
}
