/** Minimal bodies the seed allows, for tests that answer requests from a stand-in server. */

export const NOW = '2026-03-15T12:00:00.000Z';

/** A document as the service answers it: version 1, not synced, one token; `fields` replace or add. */
export function documentBody(fields: Record<string, unknown> = {}) {
  return {
    document_id: 'doc_1',
    alias: 'x',
    label: 'x',
    source: 'submit',
    version: 1,
    content: 'x',
    token_count: 1,
    tokens_used: 0,
    tokens_limit: 100,
    synced: false,
    created_at: NOW,
    updated_at: NOW,
    ...fields,
  };
}
