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

/**
 * A thread's preparation. The spec types a compile thread's prepare_status as a string and its chunk
 * counts as integers (not nullable, unlike a document's), so before the first sync a thread answers
 * `pending` with 0 of 0 chunks; after it, the same queued -> processing -> ready as a document.
 */
export interface ThreadPreparation {
  prepare_status: 'pending' | 'queued' | 'processing' | 'ready';
  chunks_total: number;
  chunks_completed: number;
  current_counts: Record<string, number>;
}

export function threadPreparation(item: Syncable, nowMs: number): ThreadPreparation {
  const p = preparation(item, nowMs);
  if (p.prepare_status === null || p.chunks_total === null || p.chunks_completed === null) {
    return { prepare_status: 'pending', chunks_total: 0, chunks_completed: 0, current_counts: {} };
  }
  return { ...p, prepare_status: p.prepare_status, chunks_total: p.chunks_total, chunks_completed: p.chunks_completed };
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
