import { statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { ensureBuilt } from '../helpers/serve-process.js';
import { tempDir } from '../helpers/service.js';
import { httpCall, prng, RestartingService } from '../helpers/soak.js';
import { Client } from '../helpers/soak-client.js';
import { allProblems, CLIENT_BUDGETS, CLIENTS, type KeyModel, newProblems, PLAN_ORDER } from '../helpers/soak-model.js';
import { type PlanName, SECONDS, SEED, type Soak, verifyDataFile } from '../helpers/soak-model.js';

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
 * Some kills hit the next start too, while it opens the database (recovering its WAL) or while it
 * writes the new bootstrap keys.
 *
 * At the end, after a last kill and restart, every acknowledged write is checked over HTTP, every
 * Idempotency-Key is repeated, and the data file (after a clean stop) is checked: money (credits,
 * compile quota, spent_usd of every key including its children's) equals the charges of the syncs
 * the model holds, no budget is passed, nothing is created twice.
 *
 * SOAK_SEED replays a run's choices (the interleaving of clients still varies); SOAK_SECONDS scales it.
 */

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
        problems: newProblems(),
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
          // Now and then the next start is killed too, while it opens the database or writes its bootstrap keys.
          if (rng() < 0.4) await service.crashWhileStarting(rng());
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
        expect(allProblems(p).slice(0, 20)).toEqual([]);
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
