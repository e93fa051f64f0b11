import { describe, expect, it } from 'vitest';
import { requestCount, runCommand } from '../helpers/command-harness.js';
import { useService, useTempFiles } from '../helpers/service-suite.js';

/**
 * A UTF-8 byte order mark is allowed only at the very start of an NDJSON batch (README): one at the
 * start of a later line (files joined with `cat`) is a bad line, named before anything is sent.
 */

const service = useService({}, { faces: ['ada-lovelace'] });
const { file } = useTempFiles('facectl-bom-');

const BOM = '\ufeff';
const line = (label: string) => JSON.stringify({ alias: 'ada-lovelace', label, content: `${label} text` });
const storedWithLabel = (prefix: string) =>
  [...service.store.values('documents')].filter((d) => d.label.startsWith(prefix)).map((d) => d.label);

describe('docs submit: a byte order mark in an NDJSON batch', () => {
  it('at the start of line 3 -> exit 2 naming the file and the line, nothing sent', async () => {
    const path = file('joined.ndjson', `${BOM}${line('bom-a1')}\n${line('bom-a2')}\n${BOM}${line('bom-a3')}\n`);
    const before = requestCount(service);
    const result = await runCommand(service, ['docs', 'submit', '--file', path, '--json']);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(
      `${path}: line 3: starts with a UTF-8 byte order mark: one is allowed only at the start of the input`,
    );
    expect(result.stdout).toBe('');
    expect(requestCount(service)).toBe(before);
    expect(storedWithLabel('bom-a')).toEqual([]);
  });

  it('on a blank line 2 too; only at the start of the input is one allowed (the batch is then sent)', async () => {
    const blank = file('blank.ndjson', `${line('bom-b1')}\n${BOM}\n${line('bom-b2')}\n`);
    const refused = await runCommand(service, ['docs', 'submit', '--file', blank]);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(`${blank}: line 2: starts with a UTF-8 byte order mark`);
    expect(storedWithLabel('bom-b')).toEqual([]);

    const leading = file('leading.ndjson', `${BOM}${line('bom-c1')}\n${line('bom-c2')}\n`);
    const sent = await runCommand(service, ['docs', 'submit', '--file', leading, '--json']);
    expect(sent.code, sent.stderr).toBe(0);
    expect(storedWithLabel('bom-c').sort()).toEqual(['bom-c1', 'bom-c2']);
  });

  it('from standard input: the line is refused when it is reached; the lines before it were sent (exit 1)', async () => {
    const stdin = `${line('bom-d1')}\n${BOM}${line('bom-d2')}\n${line('bom-d3')}\n`;
    const result = await runCommand(service, ['docs', 'submit', '-', '--concurrency', '1'], { stdin });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain('error: standard input: line 2: starts with a UTF-8 byte order mark');
    expect(storedWithLabel('bom-d')).toEqual(['bom-d1']);
  });
});
