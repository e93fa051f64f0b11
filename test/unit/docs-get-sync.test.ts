import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import getDocument from '../../src/commands/docs/get.js';
import syncDocument from '../../src/commands/docs/sync.js';
import { run } from '../../src/main.js';
import { contextFor, eventually, runCommand } from '../helpers/command-harness.js';
import { call, createDocument, createFace, expectContract, startTestService } from '../helpers/service.js';
import { useService } from '../helpers/service-suite.js';
import { argv, expectRefused } from '../helpers/unit-harness.js';

const service = useService({}, { faces: ['ada-lovelace'] });

describe('docs get', () => {
  it('prints the stored document; --json the service object', async () => {
    const doc = await createDocument(service, service.key('pro'), 'ada-lovelace', 'Some notes to read back.');
    const tc = contextFor(service, { globals: { json: true } });
    const read = await getDocument.run(tc.ctx, {}, doc.document_id);
    await tc.close();
    expect(read).toEqual(doc);
    expect(JSON.parse(tc.stdout())).toEqual(doc);

    const piped = await runCommand(service, ['docs', 'get', doc.document_id]);
    expect(piped.code).toBe(0);
    expect(piped.stdout).toContain(`document_id\t${doc.document_id}\n`);
    expect(piped.stdout).toContain('synced\tfalse\n');
    expect(piped.stdout).not.toContain('Some notes');
  });

  it('an unknown id is exit 4', async () => {
    const result = await runCommand(service, ['docs', 'get', 'doc_missing']);
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('404');
  });

  it('the help of get and sync says they use endpoints the published interface does not show', async () => {
    for (const verb of ['get', 'sync']) {
      const result = await runCommand(service, ['docs', verb, '--help']);
      expect(result.stdout).toContain('endpoint the published interface does not show');
    }
  });
});

describe('docs sync', () => {
  it('charges the document (pro: compile quota) and, with --wait, follows preparation to ready', async () => {
    const doc = await createDocument(service, service.key('pro'), 'ada-lovelace', 'word '.repeat(1500));
    const tc = contextFor(service, { globals: { json: true } });
    const synced = await syncDocument.run(tc.ctx, { wait: true, timeout: 30 }, doc.document_id);
    await tc.close();
    expect(synced.prepare_status).toBe('ready');
    expect(synced.chunks_completed).toBe(synced.chunks_total);
    expect(synced.chunks_total).toBe(Math.ceil(doc.token_count / 1000));
    expect(JSON.parse(tc.stdout())).toEqual(synced);
    expect(synced.tokens_used).toBe(doc.tokens_used + doc.token_count);
    expect(service.store.get('documents', doc.document_id)?.synced).toBe(true);
  });

  it('terminal form: a progress bar from chunks_completed/chunks_total', async () => {
    const doc = await createDocument(service, service.key('pro'), 'ada-lovelace', 'tok '.repeat(2500));
    const tc = contextFor(service, { stdoutIsTTY: true, stdinIsTTY: true });
    await syncDocument.run(tc.ctx, { wait: true, timeout: 30 }, doc.document_id);
    await tc.close();
    const stderr = stripVTControlCharacters(tc.stderr());
    // The check mark comes once preparation is ready, after the bar, not when the sync is accepted.
    expect(stderr).toMatch(
      new RegExp(
        `Preparing .* 3/3 ready[^]*✓ Synced ${doc.document_id} \\(token_count ${doc.token_count}\\), ready\n$`,
      ),
    );
    expect(stderr.match(/✓/g)).toHaveLength(1);
    expect(stripVTControlCharacters(tc.stdout())).toMatch(/^prepare_status +ready$/m);
  });

  it('without --wait prints the document as the sync left it', async () => {
    const doc = await createDocument(service, service.key('pro'), 'ada-lovelace', 'short');
    const result = await runCommand(service, ['docs', 'sync', doc.document_id]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('synced\ttrue\n');
    expect(result.stdout).toMatch(/prepare_status\t(queued|processing|ready)\n/);
  });

  it('--wait gives up after --timeout: exit 8 saying how far it got', async () => {
    const doc = await createDocument(service, service.key('pro'), 'ada-lovelace', 'tok '.repeat(4000));
    // A virtual clock: the CLI's waits pass at once, the service's preparation takes real time.
    const result = await runCommand(service, ['docs', 'sync', doc.document_id, '--wait', '--timeout', '2'], {
      now: '2026-03-15T12:00:00Z',
    });
    expect(result.code).toBe(8);
    expect(result.stderr).toMatch(/document doc_\w+ was not ready after 2 s \(prepare_status (queued|processing)/);
    expect(result.stderr).toContain(`check later with \`facectl docs get ${doc.document_id}\``);
  });

  /** `docs sync --wait` of a long document, on a virtual clock, once it waits (read back after the sync was answered). */
  async function waitingForSync() {
    const doc = await createDocument(service, service.key('pro'), 'ada-lovelace', 'tok '.repeat(4000));
    const gets = service.stats.byRoute.getDocument ?? 0;
    const tc = contextFor(service, { now: '2026-03-15T12:00:00Z' });
    const running = run(['docs', 'sync', doc.document_id, '--wait', '--timeout', '3600'], tc.ctx);
    await eventually(() => ((service.stats.byRoute.getDocument ?? 0) > gets ? true : undefined));
    return { doc, tc, running };
  }

  it('--wait on a document edited meanwhile (synced, then no longer): stops at once, exit 1, saying to sync again', async () => {
    // A ring's find: `threads sync --wait` sat 300 s on a thread whose messages were replaced during the wait.
    const { doc, tc, running } = await waitingForSync();
    const params = { document_id: doc.document_id };
    const edited = await call(service, 'editDocument', { key: service.key('pro'), params, body: { content: 'new' } });
    expect(expectContract('editDocument', edited, 200).synced).toBe(false);
    expect(await running).toBe(1);
    await tc.close();
    expect(tc.stderr()).toContain(
      `error: document ${doc.document_id} is no longer synced: it changed while its preparation was awaited\n` +
        `sync it again: \`facectl docs sync ${doc.document_id} --wait\`\n`,
    );
  });

  it('the service gone during --wait: exit 8, saying the sync was accepted and how to look again', async () => {
    // A breaker's find: serve stopped 1.2 s into the wait gave `connection refused` alone, though the sync was charged.
    const own = await startTestService();
    await createFace(own, own.key('pro'), 'ada-gone');
    const doc = await createDocument(own, own.key('pro'), 'ada-gone', 'tok '.repeat(4000));
    const tc = contextFor(own, { now: '2026-03-15T12:00:00Z' });
    const running = run(['docs', 'sync', doc.document_id, '--wait', '--timeout', '3600'], tc.ctx);
    await eventually(() => ((own.stats.byRoute.getDocument ?? 0) > 0 ? true : undefined));
    await own.close();
    expect(await running).toBe(8);
    await tc.close();
    expect(tc.stderr()).toContain(
      `the sync was accepted; once the service answers again, \`facectl docs get ${doc.document_id}\` shows where its preparation is`,
    );
  });

  it('Ctrl-C during --wait: exit 130, saying the sync was accepted and how to look again', async () => {
    const { doc, tc, running } = await waitingForSync();
    tc.interrupt();
    expect(await running).toBe(130);
    await tc.close();
    expect(tc.stderr()).toContain(
      `error: interrupted\nthe sync was accepted and preparation goes on at the service; \`facectl docs get ${doc.document_id}\` shows where it is\n`,
    );
    const stored = expectContract(
      'getDocument',
      await call(service, 'getDocument', { key: service.key('pro'), params: { document_id: doc.document_id } }),
      200,
    );
    expect(stored.synced).toBe(true);
  });

  it('--timeout must be a whole number of seconds; nothing sent', async () => {
    await expectRefused(
      service,
      argv`docs sync doc_x --wait --timeout 1.5`,
      '--timeout: must be a whole number of seconds from 1 to 86400',
    );
  });

  it.each(['docs sync doc_x', 'threads sync thr_x'])(
    '%s --timeout without --wait: exit 2 naming both flags, nothing sent (a limit silently ignored would mislead)',
    async (command) => {
      const result = await expectRefused(
        service,
        [...command.split(' '), '--timeout', '60'],
        'error: --timeout: only applies with --wait: add --wait, or leave --timeout out',
      );
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe('error: --timeout: only applies with --wait: add --wait, or leave --timeout out\n');
    },
  );

  it('a key whose budget is spent is refused: exit 6 naming the budget, nothing charged', async () => {
    const doc = await createDocument(service, service.key('pro'), 'ada-lovelace', 'some words to sync');
    const broke = expectContract(
      'createApiKey',
      await call(service, 'createApiKey', { key: service.key('pro'), body: { name: 'broke', budget_usd: 0 } }),
      201,
    );
    const result = await runCommand(service, ['docs', 'sync', doc.document_id], { apiKey: broke.key });
    expect(result.code).toBe(6);
    expect(result.stderr).toContain('budget_exceeded');
    expect(result.stderr).toContain('budget');
    expect(service.store.get('documents', doc.document_id)?.synced).toBe(false);
  });

  it('a budget under a cent: spent and budget said with the same digits, and the hint agrees', async () => {
    // 200 words cost more than $0.0001 (2 micro-dollars a token).
    const doc = await createDocument(service, service.key('pro'), 'ada-lovelace', 'word '.repeat(200));
    const tiny = expectContract(
      'createApiKey',
      await call(service, 'createApiKey', { key: service.key('pro'), body: { name: 'tiny', budget_usd: 0.0001 } }),
      201,
    );
    const result = await runCommand(service, ['docs', 'sync', doc.document_id], { apiKey: tiny.key });
    expect(result.code).toBe(6);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      new RegExp(
        `^error: this sync costs \\$0\\.\\d{6}; key ${tiny.key_prefix} has spent \\$0\\.000000 of its \\$0\\.000100 budget$`,
      ),
    );
    expect(lines.at(-1)).toBe(
      "this key's budget_usd has too little left for this request; use a key with more left, or create one with a larger --budget-usd",
    );
    expect(service.store.get('documents', doc.document_id)?.synced).toBe(false);
    expect(
      expectContract('getCurrentApiKey', await call(service, 'getCurrentApiKey', { key: tiny.key }), 200).spent_usd,
    ).toBe(0);
  });
});
