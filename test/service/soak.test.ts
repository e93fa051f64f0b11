import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { MICRO_USD_PER_TOKEN, PLANS, usdToMicroFloor } from '../../src/service/plans.js';
import { ensureBuilt } from '../helpers/serve-process.js';
import { tempDir } from '../helpers/service.js';
import { type HttpAnswer, type HttpCall, ConnectionLost, httpCall, prng, RestartingService } from '../helpers/soak.js';

/**
 * Soak of the local service (issue 5, item 5; reliability case 41 at scale): the built
 * `facectl serve --data FILE` under concurrent clients for a bounded time, killed with SIGKILL at
 * seeded random moments and started again on the same file, while the clients keep going.
 *
 * Each client has its own API key (some with a small budget_usd, and child keys with budgets) and
 * touches only its own faces, documents, threads and keys, so it can keep an exact model of what the
 * service must hold. A 2xx is acknowledged and goes into the model. A request cut by a kill is
 * unacknowledged: the client asks the service what happened (GET) and checks that it was applied
 * whole or not at all; a POST with an Idempotency-Key is instead sent again with the same key until
 * it is answered. Creations without a key that were cut are settled at the end: at most one record.
 *
 * Some kills hit the next start too, while it loads the state and replays the journal or while it
 * writes the snapshot that replaces the journal.
 *
 * At the end, after a last kill and restart, every acknowledged write is checked over HTTP, every
 * Idempotency-Key is repeated, and the data file (after a clean stop) is checked: money (credits,
 * compile quota, spent_usd of every key including its children's) equals the charges of the syncs
 * the model holds, no budget is passed, nothing is created twice.
 *
 * SOAK_SEED replays a run's choices (the interleaving of clients still varies); SOAK_SECONDS scales it.
 */

const SEED = Number.parseInt(process.env.SOAK_SEED ?? '20260315', 10);
const SECONDS = Number(process.env.SOAK_SECONDS ?? '20');
const CLIENTS = 8;
const PLAN_ORDER = ['free', 'standard', 'pro', 'connect'] as const;
type PlanName = (typeof PLAN_ORDER)[number];
/** budget_usd of each client's own key (null: none); the children get smaller ones. */
const CLIENT_BUDGETS: (number | null)[] = [null, null, null, null, 0.25, 0.05, 0.5, 0.1];
const CHILD_BUDGETS = [0.001, 0.003, 0.008, 0.02, 0.06];
/** 402 codes a sync may get when money or a budget runs out. */
const REFUSALS = new Set(['budget_exceeded', 'insufficient_credits', 'insufficient_quota']);

if (!Number.isInteger(SEED)) throw new Error(`SOAK_SEED must be an integer, not ${process.env.SOAK_SEED}`);
if (!(SECONDS > 0)) throw new Error(`SOAK_SECONDS must be a positive number, not ${process.env.SOAK_SECONDS}`);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- records of the data file, read loosely
type Json = any;

interface KeyModel {
  id: string;
  name: string;
  secret: string;
  parentId: string | null;
  budgetUsd: number | null;
  /** What syncs made with this very key cost (its children's are added when summing). */
  ownMicro: number;
}
interface FaceModel {
  alias: string;
  uid: string;
}
interface DocModel {
  id: string;
  label: string;
  alias: string;
  content: string;
  version: number;
  tokens: number;
  synced: boolean;
  source: string | null;
}
interface Message {
  role: string;
  content: string;
  from: string;
}
interface ThreadModel {
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
interface Replayable {
  kind: 'face' | 'document' | 'thread' | 'key' | 'sync';
  call: HttpCall;
  status: number;
  text: string;
  generation: number;
}
/** A creation without Idempotency-Key cut by a kill: at most one record may carry its label. */
interface Unsettled {
  kind: 'documents' | 'threads' | 'keys';
  label: string;
  content?: string;
  parentId?: string;
}

interface Figures {
  requests: number;
  acknowledged: number;
  unacknowledged: number;
  charged: number;
  refused: number;
  replays: number;
}

class Problems {
  readonly losses: string[] = [];
  readonly overspent: string[] = [];
  readonly duplicates: string[] = [];
  readonly halfApplied: string[] = [];
  readonly money: string[] = [];
  readonly unexpected: string[] = [];

  all(): string[] {
    return [
      ...this.losses.map((p) => `loss: ${p}`),
      ...this.overspent.map((p) => `overspent: ${p}`),
      ...this.duplicates.map((p) => `duplicate: ${p}`),
      ...this.halfApplied.map((p) => `half-applied: ${p}`),
      ...this.money.map((p) => `money: ${p}`),
      ...this.unexpected.map((p) => `unexpected: ${p}`),
    ];
  }
}

interface Soak {
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

function pick<T>(rng: () => number, list: readonly T[]): T {
  return list[Math.floor(rng() * list.length)] as T;
}

function text(rng: () => number, words: number): string {
  return Array.from({ length: words }, () => pick(rng, WORDS)).join(' ');
}

function microOf(usd: number): number {
  return Math.round(usd * 1_000_000);
}

/** A body for a problem report: short, and with any key secret masked. */
function snippet(text: string): string {
  return text.replace(/fcs_([A-Za-z0-9]{8})_[A-Za-z0-9]{32}/g, 'fcs_$1_…').slice(0, 200);
}

function describeAnswer(answer: HttpAnswer): string {
  return `${answer.status} ${snippet(answer.text)}`;
}

class Client {
  readonly faces: FaceModel[] = [];
  readonly docs: DocModel[] = [];
  readonly threads: ThreadModel[] = [];
  /** Keys this client holds the secret of: its own and the children it created. */
  readonly keys: KeyModel[] = [];
  readonly replayables: Replayable[] = [];
  readonly unsettled: Unsettled[] = [];
  /** Keys created (acknowledged by 409 idempotency_replay_unavailable) whose secret is gone. */
  readonly secretless: { name: string; parentId: string }[] = [];
  private counter = 0;
  private readonly rng: () => number;

  constructor(
    readonly index: number,
    readonly plan: PlanName,
    readonly soak: Soak,
  ) {
    this.rng = prng((SEED ^ Math.imul(0x9e3779b9, index + 1)) >>> 0);
  }

  private get problems(): Problems {
    return this.soak.problems;
  }

  private next(prefix: string): string {
    return `${prefix}${this.counter++}`;
  }

  private idemKey(): string {
    return `soak-${SEED}-c${this.index}-${this.counter++}`;
  }

  /** One request to the running service; answer null when the connection was lost (a kill). */
  async send(call: HttpCall): Promise<{ answer: HttpAnswer | null; generation: number }> {
    const target = await this.soak.service.current();
    this.soak.figures.requests++;
    try {
      const answer = await httpCall(target.baseUrl, target.agent, call);
      if (answer.status >= 200 && answer.status < 300) this.soak.figures.acknowledged++;
      return { answer, generation: target.generation };
    } catch (error) {
      if (!(error instanceof ConnectionLost)) throw error;
      this.soak.figures.unacknowledged++;
      return { answer: null, generation: target.generation };
    }
  }

  /** Sends until answered: reads, and repeats of a POST under the same Idempotency-Key. */
  async sendUntilAnswered(call: HttpCall): Promise<{ answer: HttpAnswer; generation: number }> {
    for (let attempt = 0; attempt < 40; attempt++) {
      const { answer, generation } = await this.send(call);
      if (answer) return { answer, generation };
    }
    throw new Error(`${call.method} ${call.path} was never answered`);
  }

  /** A POST, with an Idempotency-Key when `idempotent`: then repeated until answered, else null when cut. */
  async post(
    path: string,
    key: string,
    body: unknown,
    idempotent: boolean,
  ): Promise<{ answer: HttpAnswer | null; generation: number; call: HttpCall }> {
    const call: HttpCall = {
      method: 'POST',
      path,
      key,
      bodyText: body === undefined ? undefined : JSON.stringify(body),
    };
    if (!idempotent) return { ...(await this.send(call)), call };
    call.headers = { 'Idempotency-Key': this.idemKey() };
    return { ...(await this.sendUntilAnswered(call)), call };
  }

  private remember(kind: Replayable['kind'], call: HttpCall, answer: HttpAnswer, generation: number): void {
    if (call.headers?.['Idempotency-Key'] && answer.status >= 200 && answer.status < 300) {
      this.replayables.push({ kind, call, status: answer.status, text: answer.text, generation });
    }
  }

  private unexpected(what: string, answer: HttpAnswer): void {
    this.problems.unexpected.push(`client ${this.index} ${what}: ${describeAnswer(answer)}`);
  }

  // ---- the key chain's money, from the model ----

  /** What `key` and every key created from it spent, per the model. */
  subtreeMicro(key: KeyModel): number {
    let total = key.ownMicro;
    for (const k of this.soak.keys.values()) if (k.parentId === key.id) total += this.subtreeMicro(k);
    return total;
  }

  private chain(key: KeyModel): KeyModel[] {
    const chain: KeyModel[] = [];
    for (let k: KeyModel | undefined = key; k; k = k.parentId ? this.soak.keys.get(k.parentId) : undefined) {
      chain.push(k);
    }
    return chain;
  }

  /** A budget on the chain that a sync of `cost` would pass, per the model; undefined when it fits. */
  private budgetPassed(key: KeyModel, cost: number): KeyModel | undefined {
    return this.chain(key).find(
      (k) => k.budgetUsd !== null && this.subtreeMicro(k) + cost > usdToMicroFloor(k.budgetUsd),
    );
  }

  private charge(key: KeyModel, tokens: number, source: unknown, what: string): void {
    const cost = tokens * MICRO_USD_PER_TOKEN;
    const passed = this.budgetPassed(key, cost);
    if (passed) {
      this.problems.overspent.push(
        `${what} charged ${cost} micro-USD with ${key.name}, passing the budget of ${passed.name} (${passed.budgetUsd} USD)`,
      );
    }
    key.ownMicro += cost;
    const charges = this.soak.charges.get(this.plan) as { creditsMicro: number; quotaTokens: number };
    if (source === 'compile') charges.quotaTokens += tokens;
    else if (source === 'credits') charges.creditsMicro += cost;
    else this.problems.unexpected.push(`${what} was billed to ${String(source)} (no OAuth connection exists)`);
    this.soak.figures.charged++;
  }

  // ---- operations ----

  async run(): Promise<void> {
    while (!this.soak.stopped) await this.step();
  }

  private async step(): Promise<void> {
    const r = this.rng();
    if (this.faces.length === 0 || (r < 0.05 && this.faces.length < 6)) return this.createFace();
    if (r < 0.23) return this.submitDocument();
    if (r < 0.29 && this.docs.length > 0) return this.editDocument();
    if (r < 0.46 && this.docs.length > 0) return this.syncDocument();
    if (r < 0.5 && this.docs.length > 0) return this.raceEditAndSync(pick(this.rng, this.docs));
    if (r < 0.52 && this.docs.length > 0) return this.raceTwoSyncs(pick(this.rng, this.docs));
    if (r < 0.57 || this.threads.length === 0) return this.createThread();
    if (r < 0.67) return this.replaceMessages();
    if (r < 0.76) return this.syncThread();
    if (r < 0.79) return this.raceReplaceAndSync(pick(this.rng, this.threads));
    if (r < 0.84 && this.keys.length < 8) return this.createChildKey();
    if (r < 0.92 && this.replayables.length > 0) return this.repeat(pick(this.rng, this.replayables));
    return this.checkRead();
  }

  /**
   * A document's content: mostly short, sometimes a few thousand words; for the pro clients now and
   * then past the service's worker threshold (counted off its event loop, so other requests run
   * between the start and the end of that request).
   */
  private documentText(): string {
    const r = this.rng();
    if (this.plan === 'pro' && r < 0.03) return text(this.rng, 50_000 + Math.floor(this.rng() * 10_000));
    if (r < 0.1) return text(this.rng, 1000 + Math.floor(this.rng() * 7000));
    return text(this.rng, 3 + Math.floor(this.rng() * 150));
  }

  private syncKey(): KeyModel {
    return this.rng() < 0.5 ? (this.keys[0] as KeyModel) : pick(this.rng, this.keys);
  }

  async createFace(): Promise<void> {
    const alias = `c${this.index}-${this.next('face-')}`;
    const key = (this.keys[0] as KeyModel).secret;
    const { answer, generation, call } = await this.post(
      '/v1/faces',
      key,
      { name: `Soak ${alias}`, alias },
      this.rng() < 0.5,
    );
    if (answer === null) {
      // Cut without an Idempotency-Key: the alias tells whether it was created.
      const found = (await this.sendUntilAnswered({ method: 'GET', path: `/v1/faces/${alias}`, key })).answer;
      if (found.status === 200) this.faces.push({ alias, uid: found.body.uid });
      else if (found.status !== 404) this.unexpected(`GET face ${alias} after a cut creation`, found);
      return;
    }
    if (answer.status !== 201 || answer.body?.alias !== alias) return this.unexpected(`create face ${alias}`, answer);
    this.faces.push({ alias, uid: answer.body.uid });
    this.remember('face', call, answer, generation);
  }

  async submitDocument(): Promise<void> {
    const face = pick(this.rng, this.faces);
    const label = `c${this.index}-${this.next('doc-')}`;
    const content = this.documentText();
    const body = { alias: face.alias, content, label };
    const key = (this.keys[0] as KeyModel).secret;
    const mode = this.rng();
    let answer: HttpAnswer | null;
    let generation: number;
    let call: HttpCall;
    if (mode < 0.15) {
      // The same Idempotency-Key twice at once: one runs, the other waits and gets its answer.
      call = { method: 'POST', path: '/v1/compile/documents', key, bodyText: JSON.stringify(body) };
      call.headers = { 'Idempotency-Key': this.idemKey() };
      const [a, b] = await Promise.all([this.sendUntilAnswered(call), this.sendUntilAnswered(call)]);
      if (a.answer.text !== b.answer.text || a.answer.status !== b.answer.status) {
        this.problems.duplicates.push(
          `client ${this.index}: two concurrent submits of ${label} under one Idempotency-Key got different answers`,
        );
      }
      ({ answer, generation } = a);
    } else {
      ({ answer, generation, call } = await this.post('/v1/compile/documents', key, body, mode < 0.6));
    }
    if (answer === null) {
      this.unsettled.push({ kind: 'documents', label, content });
      return;
    }
    const doc = answer.body;
    if (answer.status !== 201 || doc?.content !== content || doc.version !== 1 || doc.synced !== false) {
      return this.unexpected(`submit ${label}`, answer);
    }
    this.docs.push({
      id: doc.document_id,
      label,
      alias: face.alias,
      content,
      version: 1,
      tokens: doc.token_count,
      synced: false,
      source: null,
    });
    this.remember('document', call, answer, generation);
    if (call.headers && this.rng() < 0.3) await this.repeat(this.replayables.at(-1) as Replayable);
  }

  async editDocument(): Promise<void> {
    const doc = pick(this.rng, this.docs);
    const key = (this.keys[0] as KeyModel).secret;
    const content = this.documentText();
    const path = `/v1/compile/documents/${doc.id}`;
    const { answer } = await this.send({ method: 'PATCH', path, key, bodyText: JSON.stringify({ content }) });
    if (answer === null) {
      const now = (await this.sendUntilAnswered({ method: 'GET', path, key })).answer;
      if (now.status !== 200) return this.unexpected(`GET ${doc.label} after a cut edit`, now);
      if (now.body.version === doc.version + 1 && now.body.content === content && now.body.synced === false) {
        Object.assign(doc, { version: doc.version + 1, content, tokens: now.body.token_count, synced: false });
      } else if (
        now.body.version !== doc.version ||
        now.body.content !== doc.content ||
        now.body.synced !== doc.synced
      ) {
        this.problems.halfApplied.push(
          `client ${this.index} ${doc.label}: a cut edit of version ${doc.version} left version ${now.body.version}, synced ${now.body.synced}`,
        );
      }
      return;
    }
    if (answer.status !== 200 || answer.body.version !== doc.version + 1 || answer.body.content !== content) {
      return this.unexpected(`edit ${doc.label} v${doc.version}`, answer);
    }
    Object.assign(doc, { version: doc.version + 1, content, tokens: answer.body.token_count, synced: false });
  }

  async syncDocument(): Promise<void> {
    const unsynced = this.docs.filter((d) => !d.synced);
    const doc = unsynced.length > 0 && this.rng() < 0.85 ? pick(this.rng, unsynced) : pick(this.rng, this.docs);
    const key = this.syncKey();
    const path = `/v1/compile/documents/${doc.id}/sync`;
    const { answer, generation, call } = await this.post(path, key.secret, undefined, this.rng() < 0.3);
    const what = `client ${this.index} sync of ${doc.label} v${doc.version}`;
    let now: HttpAnswer;
    if (answer === null) {
      now = (await this.sendUntilAnswered({ method: 'GET', path: `/v1/compile/documents/${doc.id}`, key: key.secret }))
        .answer;
      if (now.status !== 200) return this.unexpected(`GET ${doc.label} after a cut sync`, now);
      if (now.body.version !== doc.version || now.body.content !== doc.content) {
        this.problems.halfApplied.push(`${what}: the document changed to version ${now.body.version}`);
        return;
      }
      if (!now.body.synced) return; // not applied
    } else if (answer.status === 402 && REFUSALS.has(answer.body?.code)) {
      this.soak.figures.refused++;
      if (
        answer.body.code === 'budget_exceeded' &&
        !doc.synced &&
        !this.budgetPassed(key, doc.tokens * MICRO_USD_PER_TOKEN)
      ) {
        this.unexpected(`${what} refused though every budget on the chain fits`, answer);
      }
      return;
    } else if (answer.status !== 200 || answer.body.synced !== true || answer.body.version !== doc.version) {
      return this.unexpected(what, answer);
    } else {
      now = answer;
      this.remember('sync', call, answer, generation);
    }
    if (now.body.token_count !== doc.tokens)
      this.problems.losses.push(`${what}: token_count ${now.body.token_count}, not ${doc.tokens}`);
    if (!doc.synced) {
      this.charge(key, doc.tokens, now.body.billing_source, what);
      doc.synced = true;
      doc.source = now.body.billing_source;
    }
  }

  async createThread(): Promise<void> {
    const face = pick(this.rng, this.faces);
    const label = `c${this.index}-${this.next('thread-')}`;
    const r = this.rng();
    const hasQuota = PLANS[this.plan].monthly_quota > 0;
    const override = r < 0.2 ? 'credits' : r < 0.35 && hasQuota ? 'compile' : null;
    const body = { alias: face.alias, label, ...(override ? { interviewer_billing_source: override } : {}) };
    const key = (this.keys[0] as KeyModel).secret;
    const { answer, generation, call } = await this.post('/v1/compile/threads', key, body, this.rng() < 0.5);
    if (answer === null) {
      this.unsettled.push({ kind: 'threads', label });
      return;
    }
    if (answer.status !== 201 || answer.body.label !== label || answer.body.message_count !== 0) {
      return this.unexpected(`create thread ${label}`, answer);
    }
    this.threads.push({
      id: answer.body.thread_id,
      label,
      alias: face.alias,
      override,
      messages: [],
      archived: 0,
      tokens: 0,
      synced: false,
      source: null,
    });
    this.remember('thread', call, answer, generation);
  }

  async replaceMessages(): Promise<void> {
    const thread = pick(this.rng, this.threads);
    const key = (this.keys[0] as KeyModel).secret;
    const messages = this.messages();
    const path = `/v1/compile/threads/${thread.id}/messages`;
    const { answer } = await this.send({ method: 'PATCH', path, key, bodyText: JSON.stringify({ messages }) });
    const applied = (body: Json) =>
      body.messages_archived === thread.archived + thread.messages.length &&
      body.synced === false &&
      sameMessages(body.messages, messages);
    if (answer === null) {
      const now = (await this.sendUntilAnswered({ method: 'GET', path: `/v1/compile/threads/${thread.id}`, key }))
        .answer;
      if (now.status !== 200) return this.unexpected(`GET ${thread.label} after a cut replace`, now);
      if (applied(now.body)) {
        Object.assign(thread, {
          archived: thread.archived + thread.messages.length,
          messages,
          tokens: now.body.token_count,
          synced: false,
        });
      } else if (
        now.body.messages_archived !== thread.archived ||
        now.body.synced !== thread.synced ||
        !sameMessages(now.body.messages, thread.messages)
      ) {
        this.problems.halfApplied.push(
          `client ${this.index} ${thread.label}: a cut replace left ${now.body.message_count} messages, ${now.body.messages_archived} archived`,
        );
      }
      return;
    }
    if (answer.status !== 200 || !applied(answer.body) || answer.body.message_count !== messages.length) {
      return this.unexpected(`replace messages of ${thread.label}`, answer);
    }
    Object.assign(thread, {
      archived: thread.archived + thread.messages.length,
      messages,
      tokens: answer.body.token_count,
      synced: false,
    });
  }

  async syncThread(): Promise<void> {
    const unsynced = this.threads.filter((t) => !t.synced);
    const thread = unsynced.length > 0 && this.rng() < 0.85 ? pick(this.rng, unsynced) : pick(this.rng, this.threads);
    const key = this.syncKey();
    const path = `/v1/compile/threads/${thread.id}/sync`;
    const { answer, generation, call } = await this.post(path, key.secret, undefined, this.rng() < 0.3);
    const what = `client ${this.index} sync of ${thread.label}`;
    let now: HttpAnswer;
    if (answer === null) {
      now = (await this.sendUntilAnswered({ method: 'GET', path: `/v1/compile/threads/${thread.id}`, key: key.secret }))
        .answer;
      if (now.status !== 200) return this.unexpected(`GET ${thread.label} after a cut sync`, now);
      if (now.body.messages_archived !== thread.archived || !sameMessages(now.body.messages, thread.messages)) {
        this.problems.halfApplied.push(`${what}: the messages changed`);
        return;
      }
      if (!now.body.synced) return;
    } else if (answer.status === 402 && REFUSALS.has(answer.body?.code)) {
      this.soak.figures.refused++;
      if (
        answer.body.code === 'budget_exceeded' &&
        !thread.synced &&
        !this.budgetPassed(key, thread.tokens * MICRO_USD_PER_TOKEN)
      ) {
        this.unexpected(`${what} refused though every budget on the chain fits`, answer);
      }
      return;
    } else if (answer.status !== 200 || answer.body.synced !== true) {
      return this.unexpected(what, answer);
    } else {
      now = answer;
      this.remember('sync', call, answer, generation);
    }
    if (now.body.token_count !== thread.tokens) {
      this.problems.losses.push(`${what}: token_count ${now.body.token_count}, not ${thread.tokens}`);
    }
    if (!thread.synced) {
      const source = thread.override ?? now.body.interviewer_billing_source;
      this.charge(key, thread.tokens, source, what);
      thread.synced = true;
      thread.source = source;
    }
  }

  /**
   * An edit and a sync of one document at once. The sync goes under an Idempotency-Key, so its outcome
   * is always known: it charged the version its answer shows, once; the edit was applied whole or not;
   * the document ends synced only when the sync came after the edit.
   */
  async raceEditAndSync(doc: DocModel): Promise<void> {
    const key = this.syncKey();
    const main = (this.keys[0] as KeyModel).secret;
    const content = this.documentText();
    const path = `/v1/compile/documents/${doc.id}`;
    const before = { ...doc };
    const what = `client ${this.index} edit and sync of ${doc.label} v${doc.version}`;
    const syncCall: HttpCall = {
      method: 'POST',
      path: `${path}/sync`,
      key: key.secret,
      headers: { 'Idempotency-Key': this.idemKey() },
    };
    const [edit, sync] = await Promise.all([
      this.send({ method: 'PATCH', path, key: main, bodyText: JSON.stringify({ content }) }),
      this.sendUntilAnswered(syncCall),
    ]);
    const s = sync.answer;
    let charged: { tokens: number; source: unknown } | null = null;
    let syncedNew = false;
    if (s.status === 200 && s.body.synced === true && s.body.version === before.version) {
      if (s.body.content !== before.content || s.body.token_count !== before.tokens) {
        this.problems.losses.push(`${what}: the sync answered v${before.version} with other content or token_count`);
      }
      if (!before.synced) charged = { tokens: before.tokens, source: s.body.billing_source };
    } else if (s.status === 200 && s.body.synced === true && s.body.version === before.version + 1) {
      if (s.body.content !== content)
        this.problems.losses.push(`${what}: the sync answered v${s.body.version} with other content`);
      charged = { tokens: s.body.token_count, source: s.body.billing_source };
      syncedNew = true;
    } else if (s.status === 402 && REFUSALS.has(s.body?.code)) {
      this.soak.figures.refused++;
    } else {
      return this.unexpected(`${what}: sync`, s);
    }
    this.remember('sync', syncCall, s, sync.generation);

    const now = (await this.sendUntilAnswered({ method: 'GET', path, key: main })).answer;
    if (now.status !== 200) return this.unexpected(`GET ${doc.label} after an edit and a sync`, now);
    const applied = now.body.version === before.version + 1 && now.body.content === content;
    const notApplied =
      now.body.version === before.version &&
      now.body.content === before.content &&
      now.body.token_count === before.tokens;
    if (!applied && !notApplied) {
      this.problems.halfApplied.push(`${what}: the document is at v${now.body.version}`);
      return;
    }
    if (edit.answer && !(edit.answer.status === 200 && applied)) {
      if (edit.answer.status === 200) this.problems.losses.push(`${what}: the edit was answered 200 but is not there`);
      else this.unexpected(`${what}: edit`, edit.answer);
    }
    if (syncedNew && !applied)
      this.problems.halfApplied.push(`${what}: a sync of v${before.version + 1} that is not there`);
    const expectSynced = applied ? syncedNew : before.synced || s.status === 200;
    if (now.body.synced !== expectSynced) {
      this.problems.halfApplied.push(`${what}: synced is ${now.body.synced}, expected ${expectSynced}`);
    }
    if (charged) this.charge(key, charged.tokens, charged.source, what);
    Object.assign(doc, {
      version: now.body.version,
      content: now.body.content,
      tokens: now.body.token_count,
      synced: now.body.synced,
      source: now.body.billing_source,
    });
  }

  /**
   * Two syncs of one document at once with two keys (neither created from the other), each under an
   * Idempotency-Key: at most one of them is charged, which the keys' spent_usd tell.
   */
  async raceTwoSyncs(doc: DocModel): Promise<void> {
    const children = this.keys.slice(1);
    const a = children.length > 0 ? pick(this.rng, children) : undefined;
    const others = children.filter((k) => a !== undefined && k !== a && !this.related(a, k));
    if (!a || others.length === 0) return this.syncDocument();
    const pair = [a, pick(this.rng, others)];
    const main = (this.keys[0] as KeyModel).secret;
    const what = `client ${this.index} two syncs of ${doc.label} v${doc.version} (${pair[0]?.name}, ${pair[1]?.name})`;
    const spentBefore = pair.map((k) => this.subtreeMicro(k));
    const calls: HttpCall[] = pair.map((k) => ({
      method: 'POST',
      path: `/v1/compile/documents/${doc.id}/sync`,
      key: k.secret,
      headers: { 'Idempotency-Key': this.idemKey() },
    }));
    const answers = await Promise.all(calls.map((call) => this.sendUntilAnswered(call)));
    answers.forEach(({ answer, generation }, i) => {
      if (answer.status === 200 && answer.body.synced === true && answer.body.version === doc.version) {
        this.remember('sync', calls[i] as HttpCall, answer, generation);
      } else if (answer.status === 402 && REFUSALS.has(answer.body?.code)) {
        this.soak.figures.refused++;
      } else {
        this.unexpected(what, answer);
      }
    });
    const deltas: number[] = [];
    for (const [i, k] of pair.entries()) {
      const { answer } = await this.sendUntilAnswered({
        method: 'GET',
        path: '/v1/auth/api-keys/current',
        key: k.secret,
      });
      deltas.push(microOf(answer.body.spent_usd) - (spentBefore[i] as number));
    }
    const now = (await this.sendUntilAnswered({ method: 'GET', path: `/v1/compile/documents/${doc.id}`, key: main }))
      .answer;
    const cost = doc.tokens * MICRO_USD_PER_TOKEN;
    const payers = pair.filter((_, i) => deltas[i] === cost);
    if (deltas.some((d) => d !== 0 && d !== cost) || (doc.synced && payers.length > 0)) {
      this.problems.money.push(`${what}: spent_usd grew by ${deltas.join(' and ')} micro-USD; one sync costs ${cost}`);
    }
    if (payers.length > 1) this.problems.duplicates.push(`${what}: charged twice`);
    if (
      now.status !== 200 ||
      now.body.version !== doc.version ||
      now.body.synced !== (doc.synced || payers.length > 0)
    ) {
      this.problems.halfApplied.push(
        `${what}: charged ${payers.length} times, the document reads ${describeAnswer(now)}`,
      );
    }
    if (!doc.synced) {
      for (const payer of payers) this.charge(payer, doc.tokens, now.body.billing_source, what);
      if (payers.length > 0) Object.assign(doc, { synced: true, source: now.body.billing_source });
    }
  }

  /** A key and the key it descends from (or the other way round): they share spending. */
  private related(a: KeyModel, b: KeyModel): boolean {
    return this.chain(a).includes(b) || this.chain(b).includes(a);
  }

  /** A replace of a thread's messages and a sync of it at once; like raceEditAndSync. */
  async raceReplaceAndSync(thread: ThreadModel): Promise<void> {
    const key = this.syncKey();
    const main = (this.keys[0] as KeyModel).secret;
    const messages = this.messages(1);
    const before = { ...thread };
    const what = `client ${this.index} replace and sync of ${thread.label}`;
    const syncCall: HttpCall = {
      method: 'POST',
      path: `/v1/compile/threads/${thread.id}/sync`,
      key: key.secret,
      headers: { 'Idempotency-Key': this.idemKey() },
    };
    const [replace, sync] = await Promise.all([
      this.send({
        method: 'PATCH',
        path: `/v1/compile/threads/${thread.id}/messages`,
        key: main,
        bodyText: JSON.stringify({ messages }),
      }),
      this.sendUntilAnswered(syncCall),
    ]);
    const isOld = (body: Json) =>
      body.messages_archived === before.archived && sameMessages(body.messages, before.messages);
    const isNew = (body: Json) =>
      body.messages_archived === before.archived + before.messages.length && sameMessages(body.messages, messages);
    const s = sync.answer;
    let charged: { tokens: number; source: unknown } | null = null;
    let syncedNew = false;
    if (s.status === 200 && s.body.synced === true && isOld(s.body)) {
      if (s.body.token_count !== before.tokens)
        this.problems.losses.push(`${what}: the sync answered another token_count`);
      if (!before.synced)
        charged = { tokens: before.tokens, source: before.override ?? s.body.interviewer_billing_source };
    } else if (s.status === 200 && s.body.synced === true && isNew(s.body)) {
      charged = { tokens: s.body.token_count, source: before.override ?? s.body.interviewer_billing_source };
      syncedNew = true;
    } else if (s.status === 402 && REFUSALS.has(s.body?.code)) {
      this.soak.figures.refused++;
    } else {
      return this.unexpected(`${what}: sync`, s);
    }
    this.remember('sync', syncCall, s, sync.generation);

    const now = (await this.sendUntilAnswered({ method: 'GET', path: `/v1/compile/threads/${thread.id}`, key: main }))
      .answer;
    if (now.status !== 200) return this.unexpected(`GET ${thread.label} after a replace and a sync`, now);
    const applied = isNew(now.body);
    if (!applied && !(isOld(now.body) && now.body.token_count === before.tokens)) {
      this.problems.halfApplied.push(`${what}: the thread reads ${describeAnswer(now)}`);
      return;
    }
    if (replace.answer && !(replace.answer.status === 200 && applied)) {
      if (replace.answer.status === 200)
        this.problems.losses.push(`${what}: the replace was answered 200 but is not there`);
      else this.unexpected(`${what}: replace`, replace.answer);
    }
    if (syncedNew && !applied) this.problems.halfApplied.push(`${what}: a sync of the new messages that are not there`);
    const expectSynced = applied ? syncedNew : before.synced || s.status === 200;
    if (now.body.synced !== expectSynced) {
      this.problems.halfApplied.push(`${what}: synced is ${now.body.synced}, expected ${expectSynced}`);
    }
    if (charged) this.charge(key, charged.tokens, charged.source, what);
    Object.assign(thread, {
      archived: now.body.messages_archived,
      messages: applied ? messages : before.messages,
      tokens: now.body.token_count,
      synced: now.body.synced,
      source: now.body.synced ? (before.override ?? now.body.interviewer_billing_source) : thread.source,
    });
  }

  /** 0 to 6 messages (at least `min`), alternating interviewer and face. */
  private messages(min = 0): Message[] {
    return Array.from({ length: min + Math.floor(this.rng() * (7 - min)) }, (_, i) => ({
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: text(this.rng, 1 + Math.floor(this.rng() * 60)),
      from: i % 2 === 0 ? 'Interviewer' : 'Face',
    }));
  }

  async createChildKey(): Promise<void> {
    const parent = this.rng() < 0.7 ? (this.keys[0] as KeyModel) : pick(this.rng, this.keys);
    const wanted = pick(this.rng, CHILD_BUDGETS);
    const budget = parent.budgetUsd === null ? wanted : Math.min(wanted, parent.budgetUsd);
    const name = `c${this.index}-${this.next('key-')}`;
    const { answer, generation, call } = await this.post(
      '/v1/auth/api-keys',
      parent.secret,
      { name, budget_usd: budget },
      this.rng() < 0.4,
    );
    if (answer === null) {
      this.unsettled.push({ kind: 'keys', label: name, parentId: parent.id });
      return;
    }
    if (answer.status === 409 && answer.body?.code === 'idempotency_replay_unavailable') {
      // Created by the attempt a kill cut, before a restart: it exists, its secret is gone.
      this.secretless.push({ name, parentId: parent.id });
      return;
    }
    if (answer.status !== 201 || answer.body.budget_usd !== budget || answer.body.spent_usd !== 0) {
      return this.unexpected(`create key ${name}`, answer);
    }
    const key: KeyModel = {
      id: answer.body.id,
      name,
      secret: answer.body.key,
      parentId: parent.id,
      budgetUsd: budget,
      ownMicro: 0,
    };
    this.keys.push(key);
    this.soak.keys.set(key.id, key);
    this.remember('key', call, answer, generation);
  }

  /** Repeats an acknowledged POST with its Idempotency-Key: the same answer, byte for byte, nothing done twice. */
  async repeat(first: Replayable): Promise<void> {
    const { answer, generation } = await this.send(first.call);
    if (answer === null) return; // a repeat changes nothing; the end checks that it did not
    this.soak.figures.replays++;
    const what = `client ${this.index} repeat of ${first.call.method} ${first.call.path} (${first.call.headers?.['Idempotency-Key']})`;
    if (first.kind === 'key' && generation !== first.generation && answer.status === 409) {
      if (answer.body?.code !== 'idempotency_replay_unavailable') this.unexpected(what, answer);
      return;
    }
    if (
      answer.status !== first.status ||
      answer.text !== first.text ||
      answer.headers['idempotent-replayed'] !== 'true'
    ) {
      this.problems.duplicates.push(
        `${what}: ${describeAnswer(answer)}, first answer ${first.status} ${snippet(first.text)}`,
      );
    }
  }

  /** Reads one of its resources or keys back and compares it with the model. */
  async checkRead(): Promise<void> {
    const r = this.rng();
    if (r < 0.4 && this.docs.length > 0) return this.checkDocument(pick(this.rng, this.docs));
    if (r < 0.7 && this.threads.length > 0) return this.checkThread(pick(this.rng, this.threads));
    return this.checkKey(pick(this.rng, this.keys));
  }

  async checkDocument(doc: DocModel): Promise<void> {
    const key = (this.keys[0] as KeyModel).secret;
    const { answer } = await this.sendUntilAnswered({ method: 'GET', path: `/v1/compile/documents/${doc.id}`, key });
    const body = answer.body;
    if (
      answer.status !== 200 ||
      body.version !== doc.version ||
      body.content !== doc.content ||
      body.label !== doc.label ||
      body.token_count !== doc.tokens ||
      body.synced !== doc.synced ||
      (doc.synced && body.billing_source !== doc.source)
    ) {
      this.problems.losses.push(
        `client ${this.index} ${doc.label}: expected v${doc.version} synced=${doc.synced} tokens=${doc.tokens}, got ${describeAnswer(answer)}`,
      );
    }
  }

  async checkThread(thread: ThreadModel): Promise<void> {
    const key = (this.keys[0] as KeyModel).secret;
    const { answer } = await this.sendUntilAnswered({ method: 'GET', path: `/v1/compile/threads/${thread.id}`, key });
    const body = answer.body;
    if (
      answer.status !== 200 ||
      body.label !== thread.label ||
      body.message_count !== thread.messages.length ||
      body.messages_archived !== thread.archived ||
      !sameMessages(body.messages, thread.messages) ||
      body.token_count !== thread.tokens ||
      body.synced !== thread.synced ||
      (thread.override !== null && body.interviewer_billing_source !== thread.override) ||
      (thread.synced && body.interviewer_billing_source !== thread.source)
    ) {
      this.problems.losses.push(
        `client ${this.index} ${thread.label}: expected ${thread.messages.length} messages, ${thread.archived} archived, synced=${thread.synced}; got ${describeAnswer(answer)}`,
      );
    }
  }

  async checkKey(key: KeyModel): Promise<void> {
    const { answer } = await this.sendUntilAnswered({
      method: 'GET',
      path: '/v1/auth/api-keys/current',
      key: key.secret,
    });
    const spent = this.subtreeMicro(key);
    if (answer.status !== 200 || answer.body.id !== key.id || microOf(answer.body.spent_usd) !== spent) {
      this.problems.money.push(
        `client ${this.index} key ${key.name}: expected spent ${spent} micro-USD, got ${describeAnswer(answer)}`,
      );
    }
    if (
      answer.status === 200 &&
      key.budgetUsd !== null &&
      microOf(answer.body.spent_usd) > usdToMicroFloor(key.budgetUsd)
    ) {
      this.problems.overspent.push(
        `client ${this.index} key ${key.name}: spent ${answer.body.spent_usd} of ${key.budgetUsd}`,
      );
    }
  }

  /** After the last restart: every acknowledged write, read back; every Idempotency-Key, repeated. */
  async verifyOverHttp(): Promise<void> {
    const key = (this.keys[0] as KeyModel).secret;
    for (const face of this.faces) {
      const { answer } = await this.sendUntilAnswered({ method: 'GET', path: `/v1/faces/${face.alias}`, key });
      if (answer.status !== 200 || answer.body.uid !== face.uid) {
        this.problems.losses.push(`client ${this.index} face ${face.alias}: ${describeAnswer(answer)}`);
      }
    }
    for (const doc of this.docs) await this.checkDocument(doc);
    for (const thread of this.threads) await this.checkThread(thread);
    for (const k of this.keys) await this.checkKey(k);
    for (const first of this.replayables) await this.repeat(first);
  }
}

function sameMessages(got: Json, want: Message[]): boolean {
  return (
    Array.isArray(got) &&
    got.length === want.length &&
    want.every((m, i) => got[i]?.role === m.role && got[i]?.content === m.content && got[i]?.name === m.from)
  );
}

/** The data file, after a clean stop: money, budgets, and no record twice. */
function verifyDataFile(file: string, clients: Client[], soak: Soak): void {
  const problems = soak.problems;
  const journal = `${file}.journal`;
  if (existsSync(journal) && readFileSync(journal, 'utf8') !== '') {
    problems.unexpected.push('the journal is not empty after a clean stop');
  }
  const state = JSON.parse(readFileSync(file, 'utf8')) as { collections: Record<string, Json[]> };
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

describe('soak: concurrent clients, kill -9 and restart of `facectl serve --data`', () => {
  beforeAll(() => ensureBuilt(), 120_000);

  test(
    `${CLIENTS} clients for ${SECONDS} s with kills at seeded random moments: nothing acknowledged lost, no budget passed, nothing twice`,
    async () => {
      const tmp = tempDir('facectl-soak-');
      const file = join(tmp.dir, 'state.json');
      const service = new RestartingService(file);
      const soak: Soak = {
        service,
        stopped: false,
        figures: { requests: 0, acknowledged: 0, unacknowledged: 0, charged: 0, refused: 0, replays: 0 },
        problems: new Problems(),
        keys: new Map(),
        charges: new Map(PLAN_ORDER.map((plan) => [plan, { creditsMicro: 0, quotaTokens: 0 }])),
      };
      try {
        const first = await service.start();

        // Each client gets its own key, created through the service with a bootstrap key of its plan.
        const clients = Array.from({ length: CLIENTS }, (_, i) => new Client(i, PLAN_ORDER[i % 4] as PlanName, soak));
        for (const client of clients) {
          const budget = CLIENT_BUDGETS[client.index] ?? null;
          const answer = await httpCall(first.baseUrl, first.agent, {
            method: 'POST',
            path: '/v1/auth/api-keys',
            key: first.process.key(client.plan),
            bodyText: JSON.stringify({ name: `client-${client.index}`, budget_usd: budget }),
          });
          expect(answer.status, answer.text).toBe(201);
          const key: KeyModel = {
            id: answer.body.id,
            name: `client-${client.index}`,
            secret: answer.body.key,
            parentId: null, // its parent is a bootstrap key, which has no budget and spends nothing itself
            budgetUsd: budget,
            ownMicro: 0,
          };
          client.keys.push(key);
          soak.keys.set(key.id, key);
        }

        // Kills at seeded random moments: one in each of `kills` equal slots of the run.
        const rng = prng(SEED);
        const plannedKills = Math.max(5 + Math.floor(rng() * 4), Math.floor(SECONDS / 4));
        const runMs = SECONDS * 1000;
        const slot = (runMs * 0.9) / plannedKills;
        const killAt = Array.from({ length: plannedKills }, (_, i) => runMs * 0.05 + slot * (i + 0.15 + rng() * 0.7));
        const started = Date.now();
        const running = Promise.all(clients.map((c) => c.run()));
        running.catch(() => {}); // awaited below; a client that throws fails the test there
        const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
        for (const at of killAt) {
          await sleep(at - (Date.now() - started));
          await service.crash();
          // Now and then the next start is killed too, while it loads the state or writes its snapshot.
          if (rng() < 0.4) await service.crashWhileStarting(rng() < 0.5 ? 'snapshot' : rng());
          await service.start();
          await sleep(150); // let the clients reach the new process before a next kill
        }
        await sleep(runMs - (Date.now() - started));
        // A busy machine gets less done in the planned time: the run goes on until it has covered what it
        // must (enough acknowledged writes, a charged sync, a 402), waiting for that, not for a time.
        const covered = () =>
          soak.figures.acknowledged > 25 * SECONDS && soak.figures.charged > 0 && soak.figures.refused > 0;
        const longest = Date.now() + 3 * runMs;
        while (!covered() && Date.now() < longest) await sleep(200);
        soak.stopped = true;
        await running;
        const seconds = (Date.now() - started) / 1000;
        const kills = service.kills;
        const figures = { ...soak.figures };

        // A last crash with nothing in flight, a restart, then every acknowledged write over HTTP.
        await service.crashAndRestart();
        await Promise.all(clients.map((c) => c.verifyOverHttp()));
        await service.stop();
        verifyDataFile(file, clients, soak);

        const p = soak.problems;
        console.log(
          `soak: seed=${SEED} seconds=${seconds.toFixed(1)} clients=${CLIENTS} requests=${figures.requests} ` +
            `acknowledged=${figures.acknowledged} unacknowledged=${figures.unacknowledged} kills=${kills} ` +
            `start_kills=${service.startKills} ` +
            `restarts=${service.restarts} charged_syncs=${figures.charged} refused_402=${figures.refused} ` +
            `replays=${figures.replays} losses=${p.losses.length} overspent=${p.overspent.length} ` +
            `duplicates=${p.duplicates.length} half_applied=${p.halfApplied.length} money_mismatches=${p.money.length} ` +
            `unexpected=${p.unexpected.length} state_kib=${Math.round(statSync(file).size / 1024)}`,
        );
        expect(p.all().slice(0, 20)).toEqual([]);
        expect(kills).toBeGreaterThanOrEqual(5);
        expect(figures.unacknowledged).toBeGreaterThan(0);
        expect(figures.charged).toBeGreaterThan(0);
        expect(figures.refused).toBeGreaterThan(0);
        expect(figures.acknowledged).toBeGreaterThan(25 * SECONDS);
      } finally {
        soak.stopped = true;
        await service.crash().catch(() => {});
        tmp.cleanup();
      }
    },
    SECONDS * 4000 + 90_000,
  );
});
