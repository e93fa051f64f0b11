import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/service/store.js';
import { race, rounds } from '../helpers/concurrent.js';
import { BIN } from '../helpers/run-cli.js';
import { call, expectContract, startTestService, type TestService } from '../helpers/service.js';
import { ensureBuilt, tempDir } from './support.js';

// Cases 43, 48, 49 and 58 of docs/reliability.md: the local service under two serves on one file,
// hostile sizes and shapes of input, and state files it must not load.

const CONTENDER = fileURLToPath(new URL('../helpers/serve-contender.mjs', import.meta.url));

let svc: TestService | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

interface ContenderReport {
  running: boolean;
  code: number | string | null;
  created?: string[];
  stderr?: string;
}

describe('local service: two at once, hostile sizes, bad state files', () => {
  it("case 43: a serve refused because the file is in use leaves the running one's lock as it was", async () => {
    const dataFile = join(tempDir(), 'state.json');
    svc = await startTestService({ dataFile });
    const owner = readFileSync(join(`${dataFile}.lock`, 'owner.json'), 'utf8');
    for (let attempt = 0; attempt < 3; attempt++) {
      expect(() => Store.open(dataFile)).toThrow(`${dataFile} is in use by another facectl serve`);
      expect(readFileSync(join(`${dataFile}.lock`, 'owner.json'), 'utf8')).toBe(owner);
    }
    // The running serve still saves: its change is there after a restart.
    expectContract(
      'createFace',
      await call(svc, 'createFace', { key: svc.key('pro'), body: { name: 'K', alias: 'kept' } }),
      201,
    );
    await svc.close();
    svc = undefined;
    const store = Store.open(dataFile);
    expect(store.faceByAlias([...store.values('users')].find((u) => u.plan === 'pro')?.id ?? '', 'kept')).toBeDefined();
    store.abandon();
  });

  it('case 43: N serves started at once on one --data file -> exactly one runs, nothing answered 201 lost', async () => {
    ensureBuilt();
    const dataFile = join(tempDir(), 'state.json');
    const ROUNDS = 8;
    const PROCESSES = 6;
    const WRITES = 3;
    const runners: number[] = [];
    const created: string[] = [];
    const refusals: string[] = [];
    await rounds(ROUNDS, async (round) => {
      const roundDir = join(tempDir(), `round-${round}`);
      mkdirSync(roundDir);
      const results = await race(
        Array.from({ length: PROCESSES }, () => ({
          command: process.execPath,
          args: [CONTENDER, BIN, dataFile, roundDir, String(PROCESSES), String(WRITES), `r${round}`],
        })),
        { timeoutMs: 90_000 },
      );
      const reports = results.map((r) => {
        expect(r.code, r.stderr).toBe(0);
        return JSON.parse(r.stdout.trim()) as ContenderReport;
      });
      const running = reports.filter((r) => r.running);
      runners.push(running.length);
      for (const r of running) {
        expect(r.code).toBe(0);
        created.push(...(r.created ?? []));
      }
      for (const r of reports.filter((x) => !x.running)) {
        // Refused because the file is in use: exit 1 (not a usage error), naming the file.
        expect(r.code).toBe(1);
        expect(r.stderr).toContain(`${dataFile} is in use by another facectl serve`);
        refusals.push(r.stderr ?? '');
      }
    });
    // A restart: what the next serve on the file loads.
    const store = Store.open(dataFile);
    const stored = new Set([...store.values('faces')].map((face) => face.alias));
    store.abandon();
    const lost = created.filter((alias) => !stored.has(alias));
    console.log(
      `case 43: ${ROUNDS} rounds x ${PROCESSES} processes, runners per round [${runners.join(', ')}], ` +
        `${created.length} writes answered 201, ${lost.length} lost after restart`,
    );
    expect(runners).toEqual(Array.from({ length: ROUNDS }, () => 1));
    expect(created).toHaveLength(ROUNDS * WRITES);
    expect(lost).toEqual([]);
    expect(refusals).toHaveLength(ROUNDS * (PROCESSES - 1));
  }, 600_000);
});
