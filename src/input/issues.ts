import type * as z from 'zod/mini';

/**
 * Turns zod issues into the short field messages people read ("alias: required", "perspective: must
 * be one of first-person, third-person"), instead of zod's generic wording.
 */
export function formatIssue(issue: z.core.$ZodIssue): string {
  const at = formatPath(issue.path);
  const prefix = at === '' ? '' : `${at}: `;
  switch (issue.code) {
    case 'invalid_type':
      return issue.message.endsWith('received undefined')
        ? `${prefix}required`
        : `${prefix}must be ${article(issue.expected)}, found ${issue.message.replace(/^.*received /, '')}`;
    case 'invalid_value':
      return `${prefix}must be one of ${issue.values.map(String).join(', ')}`;
    case 'unrecognized_keys':
      return `${prefix}unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`;
    default:
      return `${prefix}${issue.message}`;
  }
}

/** `['messages', 3, 'from']` -> `messages[3].from`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}
