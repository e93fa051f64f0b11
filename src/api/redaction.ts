import { withoutKeys } from '../errors.js';
import type { RawResponse } from './types.js';

/** A form of the key sent as an answer may quote it back, and what is shown in its place. */
export type SecretForm = [form: string, shown: string];

/**
 * The key sent, as an answer may quote it back (an error's detail, a field, a header such as a Location), and what
 * stands in its place: a service key's prefix, as everywhere, else [redacted] (another form, or too short to show a
 * part of). Its written forms come first, so no half of one stays: JSON's escapes (`\/` too, as PHP writes it), a
 * URL's percent-encoding; a service key's secret without its `fcs_` last.
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
    if (prefix !== secret) forms.push([secret.slice('fcs_'.length), '[redacted]']);
  }
  return forms;
}

export const without = (secrets: SecretForm[], text: string): string => {
  for (const [form, shown] of secrets) if (text.includes(form)) text = text.replaceAll(form, shown);
  return text;
};

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
