import { existsSync, statSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { beforeAll, expect, test } from 'vitest';
import { Store } from '../../src/service/store.js';
import { ensureBuilt, type ServeProcess, startServeProcess } from '../helpers/serve-process.js';
import type { Json } from '../helpers/service.js';
import { type SmallDisk, smallDisk } from '../helpers/small-disk.js';
import { ConnectionLost, httpCall, prng } from '../helpers/soak.js';

/**
 * Issue 21's crash-and-fault harness: rounds of concurrent writers against the built
 * `facectl serve --data FILE`, with kill -9 at seeded random moments and writes that fail because
 * the disk is full (a small tmpfs that a filler file fills and frees while serve runs) or, where no
 * tmpfs can be mounted, because serve runs under a file size limit (`ulimit -f`, SIGXFSZ ignored: a
 * write past it fails with EFBIG) that its files reach. After each round serve starts again on the
 * file, and the file must hold every write answered 2xx, none answered with an error, and no charge
 * without its sync. One line sums it up. CRASH_SEED replays a run's choices.
 */

const SEED = Number(process.env.CRASH_SEED ?? 20261126);
const ROUNDS = 5;
const WRITERS = 4;
const PRO_CREDITS_MICRO = 20_000_000;

type Outcome = 'ok' | 'error' | 'unknown';
interface Write {
  label: string;
  content: string;
  create: Outcome;
  edited?: { content: string; outcome: Outcome };
  sync?: Outcome;
}

beforeAll(() => ensureBuilt(), 120_000);

/** Both ways where a tmpfs can be mounted (root, a container that allows it); the file size limit always. */
function kinds(): ('tmpfs' | 'ulimit')[] {
  try {
    smallDisk('tmpfs').cleanup();
    return ['tmpfs', 'ulimit'];
  } catch {
    return ['ulimit'];
  }
}

test.each(kinds())(
  `${ROUNDS} rounds of ${WRITERS} writers, kill -9 and a full disk (%s) at seeded moments: no loss, no phantom, every restart`,
  async (kind) => {
    const rng = prng(SEED);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(rng() * list.length)] as T;
    const between = (low: number, high: number) => Math.round(low + rng() * (high - low));
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    // Room for what 5 rounds of writers may write on a fast machine (25 KB documents, 7,500 writes seen): a tmpfs of
    // 64 MiB was once filled by the service's own data, and its restart refused for no room (Node 24, CI).
    const disk: SmallDisk = smallDisk(kind, 256);
    const file = join(disk.dir, 'state.db');
    const writes: Write[] = [];
    const figures = { writes: 0, refused: 0, unknown: 0, failedRestarts: 0, faults: [] as string[] };

    /** One writer: new documents, some edited, some synced, until its service goes away (kill -9). */
    async function writer(serve: ServeProcess, agent: Agent, round: number, index: number): Promise<void> {
      const key = serve.key('pro');
      const send = async (method: string, path: string, body: object): Promise<{ outcome: Outcome; json?: Json }> => {
        try {
          const answer = await httpCall(serve.baseUrl, agent, { method, path, key, bodyText: JSON.stringify(body) });
          if (answer.status >= 200 && answer.status < 300) return { outcome: 'ok', json: answer.body };
          // Only the disk may refuse a write here, and the bill a sync (on a fast machine the writers sync
          // more than the pro user's quota and credits cover): anything else is a bug of the harness or of
          // serve. Either refusal must change nothing, which verify() checks.
          const refusals = path.endsWith('/sync') ? ['storage_error', 'insufficient_credits'] : ['storage_error'];
          expect(refusals, answer.text).toContain(answer.body?.code);
          return { outcome: 'error' };
        } catch (error) {
          if (error instanceof ConnectionLost) return { outcome: 'unknown' };
          throw error;
        }
      };
      for (let n = 0; ; n++) {
        const write: Write = {
          label: `r${round}-w${index}-${n}`,
          content: `${round} ${index} ${n} `.repeat(between(100, 2500)),
          create: 'unknown',
        };
        writes.push(write);
        const created = await send('POST', '/v1/compile/documents', {
          alias: 'crash-face',
          label: write.label,
          content: write.content,
        });
        write.create = created.outcome;
        // Gone (killed): this writer's round is over. Refused (the disk): on to the next write.
        if (created.outcome === 'unknown') return;
        if (created.outcome === 'error') {
          await sleep(20);
          continue;
        }
        const id = created.json.document_id as string;
        if (rng() < 0.4) {
          const content = `edited ${write.label} `.repeat(between(50, 1500));
          const edit = await send('PATCH', `/v1/compile/documents/${id}`, { content });
          write.edited = { content, outcome: edit.outcome };
          if (edit.outcome === 'unknown') return;
        }
        if (rng() < 0.5) {
          write.sync = (await send('POST', `/v1/compile/documents/${id}/sync`, {})).outcome;
          if (write.sync === 'unknown') return;
        }
      }
    }

    /** The file as the next start finds it: every rule of the harness, checked; the problems found. */
    function verify(): { losses: string[]; phantoms: string[]; money: string[] } {
      const problems = { losses: [] as string[], phantoms: [] as string[], money: [] as string[] };
      const store = Store.open(file);
      try {
        const docs = new Map<string, ReturnType<Store['get']> & { label: string }>();
        for (const doc of store.values('documents')) {
          if (docs.has(doc.label)) problems.phantoms.push(`${doc.label}: stored twice`);
          docs.set(doc.label, doc);
        }
        for (const w of writes) {
          const doc = docs.get(w.label) as { content: string; version: number; synced: boolean } | undefined;
          if (w.create === 'error' && doc) problems.phantoms.push(`${w.label}: created, though answered 500`);
          if (w.create === 'ok' && !doc) problems.losses.push(`${w.label}: answered 201, not stored`);
          if (!doc) continue;
          const edit = w.edited?.outcome;
          const expected =
            edit === 'ok' ? [w.edited?.content] : edit === 'unknown' ? [w.content, w.edited?.content] : [w.content];
          if (!expected.includes(doc.content)) {
            (edit === 'ok' ? problems.losses : problems.phantoms).push(`${w.label}: content of the wrong version`);
          }
          if (edit === 'error' && doc.version !== 1) problems.phantoms.push(`${w.label}: edited, though answered 500`);
          if (w.sync === 'ok' && !doc.synced) problems.losses.push(`${w.label}: sync answered 200, not stored`);
          if (w.sync === 'error' && doc.synced) problems.phantoms.push(`${w.label}: synced, though answered 500`);
        }
        // No charge without its sync, no sync without its charge: the pro user's quota and credits spent
        // are exactly the tokens of the documents stored as synced.
        const synced = [...docs.values()].filter((d) => (d as { synced: boolean }).synced);
        const tokens = synced.reduce(
          (sum, d) => sum + ((d as { synced_token_count: number }).synced_token_count ?? 0),
          0,
        );
        const pro = [...store.values('users')].find((u) => u.plan === 'pro');
        const charged = (pro?.quota_used ?? 0) + (PRO_CREDITS_MICRO - (pro?.credits_micro ?? 0)) / 2;
        if (charged !== tokens) problems.money.push(`charged ${charged} tokens, synced documents hold ${tokens}`);
      } finally {
        store.close();
      }
      return problems;
    }

    const started = Date.now();
    let problems = { losses: [] as string[], phantoms: [] as string[], money: [] as string[] };
    try {
      // The face, once; and the size the file starts from.
      const first = await startServeProcess(['--data', file]);
      const made = await httpCall(first.baseUrl, new Agent(), {
        method: 'POST',
        path: '/v1/faces',
        key: first.key('pro'),
        bodyText: JSON.stringify({ name: 'Crash', alias: 'crash-face' }),
      });
      expect(made.status).toBe(201);
      await first.stop();

      for (let round = 0; round < ROUNDS; round++) {
        // The fault of this round: a crash alone, or a disk that fills (and perhaps frees) before it.
        const fault = pick(['crash', 'full-then-free', 'full-at-crash'] as const);
        const size = () =>
          Math.max(0, ...['', '-wal'].map((end) => (existsSync(file + end) ? statSync(file + end).size : 0)));
        const limit = disk.kind === 'ulimit' && fault !== 'crash' ? size() + between(64, 1024) * 1024 : undefined;
        figures.faults.push(limit === undefined ? fault : `limit+${Math.round((limit - size()) / 1024)}KiB`);
        const serve = await disk.start(file, limit);
        const agent = new Agent({ keepAlive: true, maxSockets: WRITERS });
        const running = Array.from({ length: WRITERS }, (_, i) => writer(serve, agent, round, i));
        // The fault's moment counts from the round's first write answered: serve loads its tokenizer at the
        // first count, and a kill before that would cut nothing but the load (at most 20 s).
        const answered = () => writes.some((w) => w.label.startsWith(`r${round}-`) && w.create !== 'unknown');
        for (let waited = 0; waited < 20_000 && !answered(); waited += 20) await sleep(20);
        if (disk.kind === 'tmpfs' && fault !== 'crash') {
          await sleep(between(100, 600));
          disk.fill(serve.pid);
          await sleep(between(100, 500));
          if (fault === 'full-then-free') disk.free(serve.pid);
        }
        await sleep(between(200, 1200));
        // A disk still full at the kill has refused a write by now on a quiet machine; on a busy one the
        // writers may not yet have reached the limit: the kill waits for that first refusal (at most 20 s).
        if (limit !== undefined || (disk.kind === 'tmpfs' && fault === 'full-at-crash')) {
          const refusedThisRound = () =>
            writes.some(
              (w) => w.label.startsWith(`r${round}-`) && [w.create, w.edited?.outcome, w.sync].includes('error'),
            );
          for (let waited = 0; waited < 20_000 && !refusedThisRound(); waited += 50) await sleep(50);
        }
        await serve.kill();
        await Promise.all(running);
        agent.destroy();
        if (disk.kind === 'tmpfs') disk.free(serve.pid);

        // Started again on the file: it must start; then what it holds is checked.
        try {
          const again = await startServeProcess(['--data', file]);
          await again.stop();
        } catch (error) {
          figures.failedRestarts++;
          throw error;
        }
        problems = verify();
        if (problems.losses.length + problems.phantoms.length + problems.money.length > 0) break;
      }
    } finally {
      disk.cleanup();
    }

    for (const w of writes) {
      for (const outcome of [w.create, w.edited?.outcome, w.sync]) {
        if (outcome === 'ok') figures.writes++;
        if (outcome === 'error') figures.refused++;
        if (outcome === 'unknown') figures.unknown++;
      }
    }
    console.log(
      `crash-faults: seed=${SEED} disk=${disk.kind} rounds=${ROUNDS} faults=[${figures.faults.join(' ')}] ` +
        `writes=${figures.writes} refused_by_disk=${figures.refused} unanswered=${figures.unknown} ` +
        `losses=${problems.losses.length} phantoms=${problems.phantoms.length} money_mismatches=${problems.money.length} ` +
        `failed_restarts=${figures.failedRestarts} seconds=${((Date.now() - started) / 1000).toFixed(1)}`,
    );
    expect([...problems.losses, ...problems.phantoms, ...problems.money].slice(0, 20)).toEqual([]);
    expect(figures.failedRestarts).toBe(0);
    // The faults did happen: writes were acknowledged, some refused by the disk, some cut by kill -9.
    expect(figures.writes).toBeGreaterThan(50);
    expect(figures.refused).toBeGreaterThan(0);
    expect(figures.unknown).toBeGreaterThan(0);
  },
  180_000,
);
