import { appendFileSync, openSync, readFileSync, truncateSync, writeSync, closeSync } from 'node:fs';
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
        .slice(1);
      expect(records).toHaveLength(seen.length);
    }, 90_000);
  }
});
