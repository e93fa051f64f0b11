import type { Syncable } from './records.js';

/**
 * The simulated preparation after a sync, computed from the clock (no timers, so an injected clock
 * drives it): 200 ms `queued`, then one chunk of 1,000 tokens per 100 ms `processing`, then `ready`.
 * Before any sync every field is null.
 */
export const QUEUED_MS = 200;
export const CHUNK_MS = 100;
export const CHUNK_TOKENS = 1000;

export interface Preparation {
  prepare_status: 'queued' | 'processing' | 'ready' | null;
  chunks_total: number | null;
  chunks_completed: number | null;
  current_counts: Record<string, number>;
}

export function preparation(item: Syncable, nowMs: number): Preparation {
  if (item.sync_started_ms === null || item.synced_token_count === null) {
    return { prepare_status: null, chunks_total: null, chunks_completed: null, current_counts: {} };
  }
  const tokens = item.synced_token_count;
  const total = Math.max(1, Math.ceil(tokens / CHUNK_TOKENS));
  const elapsed = nowMs - item.sync_started_ms;
  const completed = elapsed < QUEUED_MS ? 0 : Math.min(total, Math.floor((elapsed - QUEUED_MS) / CHUNK_MS));
  const status = elapsed < QUEUED_MS ? 'queued' : completed >= total ? 'ready' : 'processing';
  return {
    prepare_status: status,
    chunks_total: total,
    chunks_completed: completed,
    // Keys of current_counts are not shown by the spec; the local service reports prepared chunks and tokens.
    current_counts: { chunks: completed, tokens: Math.min(tokens, completed * CHUNK_TOKENS) },
  };
}
