import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../helpers/fault-server.js';
import { type FaultServer, runIn, startFaultServer } from './support.js';

// Case 51 of docs/reliability.md: control characters (ESC, BEL, OSC, CSI, C1) in any string from the
// service are shown escaped in tables, TSV and errors; never sent raw to the terminal.

const HOSTILE = '\x1b]0;pwned\x07\x1b[2J\x9b31m\rAda';
const SHOWN = '\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\rAda';
const FACE = { alias: 'ada-x', created: 1767225600, owned_by: 'usr_1', uid: 'face_1', object: 'face', name: HOSTILE };

let server: FaultServer;
beforeAll(async () => {
  server = await startFaultServer();
});
afterAll(() => server.close());

/** No byte a terminal would act on: C0 controls other than newline and tab, DEL and C1. */
const RAW_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;
// No colour, so any ESC on the streams would have come from the service.
const env = { NO_COLOR: '1' };

describe('case 51: control characters from the service are made visible', () => {
  it('in a table on a terminal (a record and a list)', async () => {
    server.handle((_req, res) => json(res, 200, FACE));
    const record = await runIn(server, ['faces', 'get', 'face_1'], { stdoutIsTTY: true, env });
    expect(record.code, record.stderr).toBe(0);
    expect(record.stdout).not.toMatch(RAW_CONTROL);
    expect(record.stdout).toContain(SHOWN);

    server.handle((_req, res) =>
      json(res, 200, [{ provider: HOSTILE, connected: true, connected_at: '2026-03-15T12:00:00Z' }]),
    );
    const list = await runIn(server, ['oauth', 'list'], { stdoutIsTTY: true, env });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).not.toMatch(RAW_CONTROL);
    expect(list.stdout).toContain(SHOWN);
  });

  it('in TSV when piped: one row, nothing raw', async () => {
    server.handle((_req, res) => json(res, 200, FACE));
    const piped = await runIn(server, ['faces', 'get', 'face_1'], { env });
    expect(piped.code).toBe(0);
    expect(piped.stdout).not.toMatch(RAW_CONTROL);
    expect(piped.stdout).toContain(`name\t${SHOWN}\n`);
  });

  it('in errors: the detail of a 404 and of a 500, and in the JSON error', async () => {
    server.handle((_req, res) => json(res, 404, { detail: `no face ${HOSTILE}`, code: 'face_not_found' }));
    const missing = await runIn(server, ['faces', 'get', 'face_1'], { stdoutIsTTY: true, env });
    expect(missing.code).toBe(4);
    expect(missing.stderr).not.toMatch(RAW_CONTROL);
    expect(missing.stderr).toContain(`error: no face ${SHOWN}`);

    server.handle((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`boom ${HOSTILE}`);
    });
    const broken = await runIn(server, ['faces', 'get', 'face_1'], { env, apiOptions: { maxRetries: 0 } });
    expect(broken.code).toBe(1);
    expect(broken.stderr).not.toMatch(RAW_CONTROL);
    // A body that is not JSON is shown as a snippet on one line: its white space (the CR) made a space.
    expect(broken.stderr).toContain(SHOWN.replace('\\r', ' '));

    server.handle((_req, res) => json(res, 404, { detail: `no face ${HOSTILE}`, code: 'face_not_found' }));
    const asJson = await runIn(server, ['faces', 'get', 'face_1', '--json'], { env });
    expect(asJson.stderr).not.toMatch(RAW_CONTROL);
    expect(JSON.parse(asJson.stderr).error.message).toBe(`no face ${HOSTILE}`);
  });

  it('in --json output: the same data, ESC, BEL and CR escaped by JSON', async () => {
    server.handle((_req, res) => json(res, 200, FACE));
    const result = await runIn(server, ['faces', 'get', 'face_1', '--json'], { env });
    expect(result.stdout).not.toMatch(/[\x00-\x08\x0b-\x1f]/);
    expect(JSON.parse(result.stdout).name).toBe(HOSTILE);
  });
});

describe('case 51 with colour on: our own label is coloured, the text beside it made visible', () => {
  it('a warning on a colour terminal reads "warning:" in yellow, never a literal \\x1b[33m', async () => {
    const { PassThrough } = await import('node:stream');
    const { Chalk } = await import('chalk');
    const { createOutput } = await import('../../src/io/output.js');
    const stderr = new PassThrough();
    let written = '';
    stderr.on('data', (chunk: Buffer) => {
      written += chunk.toString();
    });
    const io = {
      stdin: new PassThrough(),
      stdout: new PassThrough(),
      stderr,
      stdinIsTTY: true,
      stdoutIsTTY: true,
      stderrIsTTY: true,
      color: true,
      stderrColor: true,
      canPrompt: () => true,
    };
    const out = createOutput(
      io,
      {},
      { json: false, noInput: false, debug: false, insecureHttp: false },
      {
        chalk: new Chalk({ level: 1 }),
      },
    );
    out.warn(`Save this key now ${HOSTILE}`);
    expect(written).toBe(`\x1b[33mwarning:\x1b[39m Save this key now ${SHOWN}\n`);
  });
});

// Issue 22 item 4: bidirectional controls and invisible characters would let a name pass for another
// ("Evil\u202egnp.exe" shows as "Evilexe.png"); they are escaped wherever control characters are.
const SPOOF = 'Evil\u202egnp.exe\u2066 \u2028X\u200b\ufeff';
const SPOOF_SHOWN = 'Evil\\u202egnp.exe\\u2066 \\u2028X\\u200b\\ufeff';
const INVISIBLE = /[\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/;

describe('bidi controls and invisible characters from the service are made visible', () => {
  const spoofed = { ...FACE, name: SPOOF };

  it('in a table on a terminal, and in TSV when piped', async () => {
    server.handle((_req, res) => json(res, 200, spoofed));
    const table = await runIn(server, ['faces', 'get', 'face_1'], { stdoutIsTTY: true, env });
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).not.toMatch(INVISIBLE);
    expect(table.stdout).toContain(SPOOF_SHOWN);

    const piped = await runIn(server, ['faces', 'get', 'face_1'], { env });
    expect(piped.code).toBe(0);
    expect(piped.stdout).not.toMatch(INVISIBLE);
    expect(piped.stdout).toContain(`name\t${SPOOF_SHOWN}\n`);
  });

  it('in --json on a terminal (valid JSON, same data); into a pipe the document is exactly as received', async () => {
    server.handle((_req, res) => json(res, 200, spoofed));
    const shown = await runIn(server, ['faces', 'get', 'face_1', '--json'], { stdoutIsTTY: true, env });
    expect(shown.code).toBe(0);
    expect(shown.stdout).not.toMatch(INVISIBLE);
    expect(JSON.parse(shown.stdout).name).toBe(SPOOF);

    const piped = await runIn(server, ['faces', 'get', 'face_1', '--json'], { env });
    expect(piped.stdout).toContain(SPOOF);
    expect(JSON.parse(piped.stdout).name).toBe(SPOOF);
  });

  it('in errors, plain and --json', async () => {
    server.handle((_req, res) => json(res, 404, { detail: `no face ${SPOOF}`, code: 'face_not_found' }));
    const plain = await runIn(server, ['faces', 'get', 'face_1'], { stdoutIsTTY: true, env });
    expect(plain.code).toBe(4);
    expect(plain.stderr).not.toMatch(INVISIBLE);
    expect(plain.stderr).toContain(`error: no face ${SPOOF_SHOWN}`);

    const asJson = await runIn(server, ['faces', 'get', 'face_1', '--json'], { env });
    expect(asJson.stderr).not.toMatch(INVISIBLE);
    expect(JSON.parse(asJson.stderr).error.message).toBe(`no face ${SPOOF}`);
  });
});
