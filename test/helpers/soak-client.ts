import { MICRO_USD_PER_TOKEN, PLANS, usdToMicroFloor } from '../../src/service/plans.js';
import { type HttpAnswer, type HttpCall, ConnectionLost, httpCall, prng } from './soak.js';
import {
  answerHas,
  CHILD_BUDGETS,
  type DocModel,
  describeAnswer,
  type FaceModel,
  type Json,
  type KeyModel,
  type Message,
  microOf,
  pick,
  type PlanName,
  type Problems,
  REFUSALS,
  type Replayable,
  sameMessages,
  SEED,
  type Soak,
  snippet,
  text,
  type ThreadModel,
  type Unsettled,
} from './soak-model.js';

/**
 * One client of the service soak: it sends seeded random requests with its own keys, keeps an exact
 * model of what the service must hold, and reports every difference as a problem.
 */
export class Client {
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

  /** The secret of the client's own key (the first it holds). */
  private get mainSecret(): string {
    return (this.keys[0] as KeyModel).secret;
  }

  /** GETs `path` until answered (with the client's own key unless told). */
  private async read(path: string, key = this.mainSecret): Promise<HttpAnswer> {
    return (await this.sendUntilAnswered({ method: 'GET', path, key })).answer;
  }

  /** A POST of a sync under a fresh Idempotency-Key (its outcome is always learnt by sending it again). */
  private syncCall(path: string, key: KeyModel): HttpCall {
    return { method: 'POST', path, key: key.secret, headers: { 'Idempotency-Key': this.idemKey() } };
  }

  /** Counts a 402 for money or a budget; false for any other answer. */
  private countRefusal(answer: HttpAnswer): boolean {
    if (answer.status !== 402 || !REFUSALS.has(answer.body?.code)) return false;
    this.soak.figures.refused++;
    return true;
  }

  /**
   * After a race of a change (an edit, a replace) with a sync, the resource read back: the change's
   * answer agrees with whether the change is there.
   */
  private settleRace(race: { what: string; change: string; changeAnswer: HttpAnswer | null; applied: boolean }): void {
    const { what, change, changeAnswer, applied } = race;
    if (!changeAnswer || (changeAnswer.status === 200 && applied)) return;
    if (changeAnswer.status === 200)
      this.problems.losses.push(`${what}: the ${change} was answered 200 but is not there`);
    else this.unexpected(`${what}: ${change}`, changeAnswer);
  }

  /** After such a race: synced when the sync came after the change, or when there was no change to come after. */
  private expectSynced(race: {
    what: string;
    applied: boolean;
    syncedNew: boolean;
    wasSynced: boolean;
    sync: HttpAnswer;
    now: HttpAnswer;
  }): void {
    const expected = race.applied ? race.syncedNew : race.wasSynced || race.sync.status === 200;
    if (race.now.body.synced !== expected) {
      this.problems.halfApplied.push(`${race.what}: synced is ${race.now.body.synced}, expected ${expected}`);
    }
  }

  /**
   * A sync refused with 402 for money or a budget: counted, and unexpected when the model says every
   * budget on the key's chain fits a charge of `item`. False for any other answer.
   */
  private refused(answer: HttpAnswer, key: KeyModel, item: { synced: boolean; tokens: number }, what: string): boolean {
    if (!this.countRefusal(answer)) return false;
    if (
      answer.body.code === 'budget_exceeded' &&
      !item.synced &&
      !this.budgetPassed(key, item.tokens * MICRO_USD_PER_TOKEN)
    ) {
      this.unexpected(`${what} refused though every budget on the chain fits`, answer);
    }
    return true;
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

  /** A document or thread to sync: mostly one not synced yet, when there is one. */
  private pickToSync<T extends { synced: boolean }>(list: T[]): T {
    const unsynced = list.filter((item) => !item.synced);
    return unsynced.length > 0 && this.rng() < 0.85 ? pick(this.rng, unsynced) : pick(this.rng, list);
  }

  /** A sync, under an Idempotency-Key now and then. */
  private postSync(path: string, key: KeyModel) {
    return this.post(path, key.secret, undefined, this.rng() < 0.3);
  }

  private syncKey(): KeyModel {
    return this.rng() < 0.5 ? (this.keys[0] as KeyModel) : pick(this.rng, this.keys);
  }

  async createFace(): Promise<void> {
    const alias = `c${this.index}-${this.next('face-')}`;
    const key = this.mainSecret;
    const { answer, generation, call } = await this.post(
      '/v1/faces',
      key,
      { name: `Soak ${alias}`, alias },
      this.rng() < 0.5,
    );
    if (answer === null) {
      // Cut without an Idempotency-Key: the alias tells whether it was created.
      const found = await this.read(`/v1/faces/${alias}`);
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
    const key = this.mainSecret;
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
    const key = this.mainSecret;
    const content = this.documentText();
    const path = `/v1/compile/documents/${doc.id}`;
    const { answer } = await this.send({ method: 'PATCH', path, key, bodyText: JSON.stringify({ content }) });
    if (answer === null) {
      const now = await this.read(path);
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
    const doc = this.pickToSync(this.docs);
    const key = this.syncKey();
    const { answer, generation, call } = await this.postSync(`/v1/compile/documents/${doc.id}/sync`, key);
    const what = `client ${this.index} sync of ${doc.label} v${doc.version}`;
    let now: HttpAnswer;
    if (answer === null) {
      now = await this.read(`/v1/compile/documents/${doc.id}`, key.secret);
      if (now.status !== 200) return this.unexpected(`GET ${doc.label} after a cut sync`, now);
      if (now.body.version !== doc.version || now.body.content !== doc.content) {
        this.problems.halfApplied.push(`${what}: the document changed to version ${now.body.version}`);
        return;
      }
      if (!now.body.synced) return; // not applied
    } else if (this.refused(answer, key, doc, what)) {
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
    const key = this.mainSecret;
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
    const key = this.mainSecret;
    const messages = this.messages();
    const path = `/v1/compile/threads/${thread.id}/messages`;
    const { answer } = await this.send({ method: 'PATCH', path, key, bodyText: JSON.stringify({ messages }) });
    const applied = (body: Json) =>
      body.messages_archived === thread.archived + thread.messages.length &&
      body.synced === false &&
      sameMessages(body.messages, messages);
    if (answer === null) {
      const now = await this.read(`/v1/compile/threads/${thread.id}`);
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
    const thread = this.pickToSync(this.threads);
    const key = this.syncKey();
    const { answer, generation, call } = await this.postSync(`/v1/compile/threads/${thread.id}/sync`, key);
    const what = `client ${this.index} sync of ${thread.label}`;
    let now: HttpAnswer;
    if (answer === null) {
      now = await this.read(`/v1/compile/threads/${thread.id}`, key.secret);
      if (now.status !== 200) return this.unexpected(`GET ${thread.label} after a cut sync`, now);
      if (now.body.messages_archived !== thread.archived || !sameMessages(now.body.messages, thread.messages)) {
        this.problems.halfApplied.push(`${what}: the messages changed`);
        return;
      }
      if (!now.body.synced) return;
    } else if (this.refused(answer, key, thread, what)) {
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
    const main = this.mainSecret;
    const content = this.documentText();
    const path = `/v1/compile/documents/${doc.id}`;
    const before = { ...doc };
    const what = `client ${this.index} edit and sync of ${doc.label} v${doc.version}`;
    const syncCall = this.syncCall(`${path}/sync`, key);
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
    } else if (!this.countRefusal(s)) {
      return this.unexpected(`${what}: sync`, s);
    }
    this.remember('sync', syncCall, s, sync.generation);

    const now = await this.read(path, main);
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
    this.settleRace({ what, change: 'edit', changeAnswer: edit.answer, applied });
    if (syncedNew && !applied)
      this.problems.halfApplied.push(`${what}: a sync of v${before.version + 1} that is not there`);
    this.expectSynced({ what, applied, syncedNew, wasSynced: before.synced, sync: s, now });
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
    const main = this.mainSecret;
    const what = `client ${this.index} two syncs of ${doc.label} v${doc.version} (${pair[0]?.name}, ${pair[1]?.name})`;
    const spentBefore = pair.map((k) => this.subtreeMicro(k));
    const calls = pair.map((k) => this.syncCall(`/v1/compile/documents/${doc.id}/sync`, k));
    const answers = await Promise.all(calls.map((call) => this.sendUntilAnswered(call)));
    answers.forEach(({ answer, generation }, i) => {
      if (answer.status === 200 && answer.body.synced === true && answer.body.version === doc.version) {
        this.remember('sync', calls[i] as HttpCall, answer, generation);
      } else if (!this.countRefusal(answer)) {
        this.unexpected(what, answer);
      }
    });
    const deltas: number[] = [];
    for (const [i, k] of pair.entries()) {
      const answer = await this.read('/v1/auth/api-keys/current', k.secret);
      deltas.push(microOf(answer.body.spent_usd) - (spentBefore[i] as number));
    }
    const now = await this.read(`/v1/compile/documents/${doc.id}`, main);
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
    const main = this.mainSecret;
    const messages = this.messages(1);
    const before = { ...thread };
    const what = `client ${this.index} replace and sync of ${thread.label}`;
    const syncCall = this.syncCall(`/v1/compile/threads/${thread.id}/sync`, key);
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
    } else if (!this.countRefusal(s)) {
      return this.unexpected(`${what}: sync`, s);
    }
    this.remember('sync', syncCall, s, sync.generation);

    const now = await this.read(`/v1/compile/threads/${thread.id}`, main);
    if (now.status !== 200) return this.unexpected(`GET ${thread.label} after a replace and a sync`, now);
    const applied = isNew(now.body);
    if (!applied && !(isOld(now.body) && now.body.token_count === before.tokens)) {
      this.problems.halfApplied.push(`${what}: the thread reads ${describeAnswer(now)}`);
      return;
    }
    this.settleRace({ what, change: 'replace', changeAnswer: replace.answer, applied });
    if (syncedNew && !applied) this.problems.halfApplied.push(`${what}: a sync of the new messages that are not there`);
    this.expectSynced({ what, applied, syncedNew, wasSynced: before.synced, sync: s, now });
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
    const answer = await this.read(`/v1/compile/documents/${doc.id}`);
    const body = answer.body;
    const { version, content, label, tokens: token_count, synced } = doc;
    if (
      !answerHas(answer, { version, content, label, token_count, synced }) ||
      (doc.synced && body.billing_source !== doc.source)
    ) {
      this.problems.losses.push(
        `client ${this.index} ${doc.label}: expected v${doc.version} synced=${doc.synced} tokens=${doc.tokens}, got ${describeAnswer(answer)}`,
      );
    }
  }

  async checkThread(thread: ThreadModel): Promise<void> {
    const answer = await this.read(`/v1/compile/threads/${thread.id}`);
    const body = answer.body;
    const { label, archived: messages_archived, tokens: token_count, synced } = thread;
    if (
      !answerHas(answer, { label, message_count: thread.messages.length, messages_archived, token_count, synced }) ||
      !sameMessages(body.messages, thread.messages) ||
      (thread.override !== null && body.interviewer_billing_source !== thread.override) ||
      (thread.synced && body.interviewer_billing_source !== thread.source)
    ) {
      this.problems.losses.push(
        `client ${this.index} ${thread.label}: expected ${thread.messages.length} messages, ${thread.archived} archived, synced=${thread.synced}; got ${describeAnswer(answer)}`,
      );
    }
  }

  async checkKey(key: KeyModel): Promise<void> {
    const answer = await this.read('/v1/auth/api-keys/current', key.secret);
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
    for (const face of this.faces) {
      const answer = await this.read(`/v1/faces/${face.alias}`);
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
