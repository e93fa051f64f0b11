import { existsSync } from 'node:fs';
import { PLANS, usdToMicroFloor } from '../../src/service/plans.js';
import { COLLECTION_NAMES } from '../../src/service/records.js';
import { Store } from '../../src/service/store.js';
import type { Client } from './soak-client.js';
import type { HttpAnswer, HttpCall, RestartingService } from './soak.js';

/**
 * The model side of the service soak (test/service/soak.test.ts): its settings, what each client
 * remembers of the service's state, the problems it finds, and the check of the data file at the end.
 */

export const SEED = Number.parseInt(process.env.SOAK_SEED ?? '20260315', 10);
export const SECONDS = Number(process.env.SOAK_SECONDS ?? '20');
export const CLIENTS = 8;
export const PLAN_ORDER = ['free', 'standard', 'pro', 'connect'] as const;
export type PlanName = (typeof PLAN_ORDER)[number];
/** budget_usd of each client's own key (null: none); the children get smaller ones. */
export const CLIENT_BUDGETS: (number | null)[] = [null, null, null, null, 0.25, 0.05, 0.5, 0.1];
export const CHILD_BUDGETS = [0.001, 0.003, 0.008, 0.02, 0.06];
/** 402 codes a sync may get when money or a budget runs out. */
export const REFUSALS = new Set(['budget_exceeded', 'insufficient_credits', 'insufficient_quota']);

if (!Number.isInteger(SEED)) throw new Error(`SOAK_SEED must be an integer, not ${process.env.SOAK_SEED}`);
if (!(SECONDS > 0)) throw new Error(`SOAK_SECONDS must be a positive number, not ${process.env.SOAK_SECONDS}`);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- records of the data file, read loosely
export type Json = any;

export interface KeyModel {
  id: string;
  name: string;
  secret: string;
  parentId: string | null;
  budgetUsd: number | null;
  /** What syncs made with this very key cost (its children's are added when summing). */
  ownMicro: number;
}
export interface FaceModel {
  alias: string;
  uid: string;
}
export interface DocModel {
  id: string;
  label: string;
  alias: string;
  content: string;
  version: number;
  tokens: number;
  synced: boolean;
  source: string | null;
}
export interface Message {
  role: string;
  content: string;
  from: string;
}
export interface ThreadModel {
  id: string;
  label: string;
  alias: string;
  override: string | null;
  messages: Message[];
  archived: number;
  tokens: number;
  synced: boolean;
  source: string | null;
}
/** An acknowledged POST under an Idempotency-Key: repeating it must give back the same answer. */
export interface Replayable {
  kind: 'face' | 'document' | 'thread' | 'key' | 'sync';
  call: HttpCall;
  status: number;
  text: string;
  generation: number;
}
/** A creation without Idempotency-Key cut by a kill: at most one record may carry its label. */
export interface Unsettled {
  kind: 'documents' | 'threads' | 'keys';
  label: string;
  content?: string;
  parentId?: string;
}

export interface Figures {
  requests: number;
  acknowledged: number;
  unacknowledged: number;
  charged: number;
  refused: number;
  replays: number;
}

/** What went wrong, by kind, with each kind's name in the report. */
export const PROBLEM_KINDS = {
  losses: 'loss',
  overspent: 'overspent',
  duplicates: 'duplicate',
  halfApplied: 'half-applied',
  money: 'money',
  unexpected: 'unexpected',
} as const;
export type Problems = Record<keyof typeof PROBLEM_KINDS, string[]>;

export function newProblems(): Problems {
  return Object.fromEntries(Object.keys(PROBLEM_KINDS).map((kind) => [kind, []])) as unknown as Problems;
}

/** Every problem, kind by kind, named. */
export function allProblems(problems: Problems): string[] {
  return Object.entries(PROBLEM_KINDS).flatMap(([kind, name]) =>
    problems[kind as keyof Problems].map((p) => `${name}: ${p}`),
  );
}

export interface Soak {
  service: RestartingService;
  stopped: boolean;
  figures: Figures;
  problems: Problems;
  keys: Map<string, KeyModel>;
  /** Charges the model expects, per plan (one user each). */
  charges: Map<PlanName, { creditsMicro: number; quotaTokens: number }>;
}

const WORDS = [
  'apple',
  'river',
  'stone',
  'cloud',
  'green',
  'music',
  'paper',
  'light',
  'table',
  'horse',
  'winter',
  'garden',
  'letter',
  'window',
  'silver',
  'morning',
  'café',
  'naïve',
  'über',
  '東京',
  'señor',
  'quiet',
  '"quoted"',
  'back\\slash',
  'tab\there',
  'line\nbreak',
  '<|endoftext|>',
  'emoji🙂',
];

export function pick<T>(rng: () => number, list: readonly T[]): T {
  return list[Math.floor(rng() * list.length)] as T;
}

export function text(rng: () => number, words: number): string {
  return Array.from({ length: words }, () => pick(rng, WORDS)).join(' ');
}

export function microOf(usd: number): number {
  return Math.round(usd * 1_000_000);
}

/** A body for a problem report: short, and with any key secret masked. */
export function snippet(text: string): string {
  return text.replace(/fcs_([A-Za-z0-9]{8})_[A-Za-z0-9]{32}/g, 'fcs_$1_…').slice(0, 200);
}

export function describeAnswer(answer: HttpAnswer): string {
  return `${answer.status} ${snippet(answer.text)}`;
}

/** A 200 whose body has each of these fields with this value. */
export function answerHas(answer: HttpAnswer, fields: Record<string, unknown>): boolean {
  return answer.status === 200 && Object.entries(fields).every(([name, value]) => answer.body[name] === value);
}

export function sameMessages(got: Json, want: Message[]): boolean {
  return (
    Array.isArray(got) &&
    got.length === want.length &&
    want.every((m, i) => got[i]?.role === m.role && got[i]?.content === m.content && got[i]?.name === m.from)
  );
}

/** Every record of the data file, by collection (read with serve stopped). */
function readState(file: string): { collections: Record<string, Json[]> } {
  const store = Store.open(file);
  try {
    return { collections: Object.fromEntries(COLLECTION_NAMES.map((name) => [name, [...store.values(name)]])) };
  } finally {
    store.close();
  }
}

/** The data file, after a clean stop: money, budgets, and no record twice. */
export function verifyDataFile(file: string, clients: Client[], soak: Soak): void {
  const problems = soak.problems;
  if (existsSync(`${file}-wal`)) problems.unexpected.push('the WAL is still there after a clean stop');
  const state = readState(file);
  const users: Json[] = state.collections.users ?? [];
  const keys: Json[] = state.collections.keys ?? [];
  const byPlan = new Map<string, Json>(users.map((u) => [u.plan, u]));

  // Money of each user: what the model's syncs charged, never below zero, never past the quota.
  for (const plan of PLAN_ORDER) {
    const user = byPlan.get(plan);
    const charges = soak.charges.get(plan) as { creditsMicro: number; quotaTokens: number };
    const credits = PLANS[plan].credits_micro - charges.creditsMicro;
    if (user.credits_micro !== credits) {
      problems.money.push(`${plan} user: credits ${user.credits_micro} micro-USD, expected ${credits}`);
    }
    if (user.credits_micro < 0) problems.overspent.push(`${plan} user: credits ${user.credits_micro} micro-USD`);
    if (user.quota_used !== charges.quotaTokens) {
      problems.money.push(`${plan} user: compile quota used ${user.quota_used}, expected ${charges.quotaTokens}`);
    }
    if (user.quota_used > PLANS[plan].monthly_quota) {
      problems.overspent.push(`${plan} user: compile quota used ${user.quota_used} of ${PLANS[plan].monthly_quota}`);
    }
  }

  // Every key: spent = its own syncs (the model's) + its children's spent, and within its budget.
  const children = new Map<string, Json[]>();
  for (const k of keys) if (k.parent_id) children.set(k.parent_id, [...(children.get(k.parent_id) ?? []), k]);
  for (const k of keys) {
    const own = soak.keys.get(k.id)?.ownMicro ?? 0;
    const expected = own + (children.get(k.id) ?? []).reduce((sum, c) => sum + c.spent_micro, 0);
    if (k.spent_micro !== expected) {
      problems.money.push(`key ${k.name}: spent ${k.spent_micro} micro-USD, expected ${expected}`);
    }
    if (k.budget_usd !== null && k.spent_micro > usdToMicroFloor(k.budget_usd)) {
      problems.overspent.push(`key ${k.name}: spent ${k.spent_micro} micro-USD of a ${k.budget_usd} USD budget`);
    }
  }

  // No record twice; every record is known to the model or is the single result of a cut creation.
  const labelOf: Record<Unsettled['kind'], (r: Json) => string> = {
    documents: (r) => r.label,
    threads: (r) => r.label,
    keys: (r) => r.name,
  };
  for (const kind of ['documents', 'threads', 'keys'] as const) {
    // Every start mints a bootstrap key per user, all of the same name: those are not duplicates.
    const records: Json[] = (state.collections[kind] ?? []).filter((r: Json) => r.bootstrap !== true);
    const byLabel = new Map<string, Json[]>();
    for (const r of records) byLabel.set(labelOf[kind](r), [...(byLabel.get(labelOf[kind](r)) ?? []), r]);
    for (const [label, found] of byLabel) {
      if (found.length > 1) problems.duplicates.push(`${found.length} ${kind} labelled ${label}`);
    }
    const known = new Map<string, string>(); // label -> id the model holds
    for (const c of clients) {
      const list = kind === 'documents' ? c.docs : kind === 'threads' ? c.threads : c.keys;
      for (const item of list) known.set('label' in item ? item.label : item.name, item.id);
    }
    for (const [label, id] of known) {
      if (!(byLabel.get(label) ?? []).some((r) => r.id === id))
        problems.losses.push(`${kind} ${label} (${id}) is not in the data file`);
    }
    for (const c of clients) {
      for (const u of c.unsettled.filter((x) => x.kind === kind)) {
        const found = byLabel.get(u.label) ?? [];
        const record = found[0];
        if (record === undefined) continue; // not applied: fine
        const whole =
          kind === 'documents'
            ? record.content === u.content && record.version === 1 && record.synced === false && record.token_count > 0
            : kind === 'threads'
              ? record.messages.length === 0 && record.synced === false
              : record.parent_id === u.parentId && record.spent_micro === 0;
        if (!whole)
          problems.halfApplied.push(`a cut creation of ${kind} ${u.label} left ${snippet(JSON.stringify(record))}`);
      }
      for (const s of kind === 'keys' ? c.secretless : []) {
        const found = byLabel.get(s.name) ?? [];
        if (found.length !== 1 || found[0].parent_id !== s.parentId) {
          problems.losses.push(`key ${s.name} (answered as created, secret not replayable) is missing`);
        }
      }
    }
  }
}
