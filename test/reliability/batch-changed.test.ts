import { appendFileSync, openSync, readFileSync, truncateSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../helpers/fault-server.js';
import { documentBody } from '../helpers/seed-bodies.js';
import { makeConfigDir, runCli } from '../helpers/run-cli.js';
import { ensureBuilt, type FaultServer, journalFiles, KEY, startFaultServer, tempFile } from './support.js';

// Case 50 of docs/reliability.md: a file changed between a batch's check pass and its send pass
// (truncated, appended, edited) -> the batch stops, keeps its journal, exits non-zero and says the file
// changed. Only a file over 16 MiB is read twice (a smaller one is kept in memory from the check).

const LINES = 40;
const CONTENT_BYTES = 512 * 1024;

let server: FaultServer;
beforeAll(async () => {
  ensureBuilt();
  server = await startFaultServer();
});
afterAll(async () => {
  await server.close();
});

function documentLine(label: string, letter: string): string {
  return JSON.stringify({ alias: 'ada-changed', label, content: letter.repeat(CONTENT_BYTES) });
}

/** The service's answer to a created document (its content not echoed: the contract allows any string). */
function answer(label: string, n: number): Record<string, unknown> {
  return documentBody({ document_id: `doc_${n}`, alias: 'ada-changed', label, source: 'api', content: '' });
}

const changes: Record<string, (file: string, size: number) => void> = {
  truncated: (file, size) => truncateSync(file, Math.floor(size / 2)),
  appended: (file) => appendFileSync(file, `${documentLine('changed-appended', 'z')}\n`),
  // Same size: one letter of a late line's content, far past what the send pass has read so far.
  edited: (file, size) => {
    const fd = openSync(file, 'r+');
    writeSync(fd, 'q', size - 1000);
    closeSync(fd);
  },
};

describe('case 50: a batch file changed between the check and the send', () => {
  for (const [how, change] of Object.entries(changes)) {
    it(`${how}: the batch stops, names the file, keeps its journal, exits non-zero, sends nothing unchecked`, async () => {
      const labels = Array.from({ length: LINES }, (_, i) => `changed-${how}-${i}`);
      const text = `${labels.map((label) => documentLine(label, 'a')).join('\n')}\n`;
      const file = tempFile('big.ndjson', text);
      const size = Buffer.byteLength(text);
      expect(size).toBeGreaterThan(16 * 1024 * 1024);
      let changed = false;
      const seen: string[] = [];
      server.handle((req, res) => {
        // The first request comes after the check pass: the file is changed before it is answered.
        if (!changed) {
          change(file, size);
          changed = true;
        }
        const body = JSON.parse(req.body) as { label: string; content: string };
        seen.push(req.body.includes('q') || body.content.includes('z') ? `unchecked:${body.label}` : body.label);
        json(res, 201, answer(body.label, seen.length));
      });
      const configDir = makeConfigDir();
      const result = await runCli(['docs', 'submit', '--file', file, '--concurrency', '1', '--json'], {
        env: { FACECTL_CONFIG_DIR: configDir, FACECTL_BASE_URL: server.baseUrl, FACECTL_API_KEY: KEY },
        timeoutMs: 60_000,
      });
      expect(changed).toBe(true);
      expect(result.code, result.stderr).toBe(1);
      // Under --json, stderr is the one error document; the --resume command rides in it.
      const { error } = JSON.parse(result.stderr) as { error: { code: string; message: string } };
      expect(error.code).toBe('input_changed');
      expect(error.message).toContain(`${file} changed after its lines were checked`);
      // The size it has now (stat), not what the send pass had read of it before the cut.
      if (how === 'truncated') expect(error.message).toContain(`it is now shorter (${Math.floor(size / 2)} bytes)`);
      expect(result.stderr).not.toContain('standard input');
      expect(result.stderr).toContain(`facectl docs submit --file ${file} --resume`);
      // Only lines of the file as checked were sent, each once, and fewer than all of them.
      expect(seen.filter((label) => label.startsWith('unchecked:'))).toEqual([]);
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen.length).toBeLessThan(LINES);
      // The journal stays, recording what was sent, for --resume.
      const journals = journalFiles(configDir);
      expect(journals).toHaveLength(1);
      const records = readFileSync(journals[0] as string, 'utf8')
        .trim()
        .split('\n')
        .slice(1)
        .filter((line) => line.includes('"document_id"'));
      expect(records).toHaveLength(seen.length);
    }, 90_000);
  }

  it('--resume of a finished batch reads the file the same way: changed under it, it stops (exit 1)', async () => {
    const labels = Array.from({ length: LINES }, (_, i) => `changed-finished-${i}`);
    const lines = labels.map((label) => documentLine(label, 'a'));
    const file = tempFile('finished.ndjson', `${lines.join('\n')}\n`);
    const env = { FACECTL_CONFIG_DIR: makeConfigDir(), FACECTL_BASE_URL: server.baseUrl, FACECTL_API_KEY: KEY };
    let seen: string[] = [];
    let onRequest = () => {};
    server.handle((req, res) => {
      onRequest();
      const { label } = JSON.parse(req.body) as { label: string };
      seen.push(label);
      json(res, 201, answer(label, seen.length));
    });
    const args = ['docs', 'submit', '--file', file, '--concurrency', '1', '--json'];
    const first = await runCli(args, { env, timeoutMs: 60_000 });
    expect(first.code, first.stderr).toBe(0);
    expect(seen).toHaveLength(LINES);

    // Line 1 edited since (same size), so the resume sends it; while it is in flight the file is cut.
    const text = `${[documentLine(labels[0] as string, 'b'), ...lines.slice(1)].join('\n')}\n`;
    writeFileSync(file, text);
    seen = [];
    onRequest = () => {
      truncateSync(file, Math.floor(Buffer.byteLength(text) / 2));
      onRequest = () => {};
    };
    const result = await runCli([...args, '--resume'], { env, timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(1);
    const { error } = JSON.parse(result.stderr) as { error: { code: string; message: string } };
    expect(error.code).toBe('input_changed');
    expect(error.message).toContain(`${file} changed after its lines were checked`);
    expect(result.stderr).not.toContain('already finished');
    // Only the edited line was sent; the lines the finished batch had submitted were not sent again.
    expect(seen).toEqual([labels[0]]);
    for (const line of result.stdout.trim().split('\n')) expect(JSON.parse(line)).toMatchObject({ ok: true });
  }, 90_000);
});
