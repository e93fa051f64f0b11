import { readFileSync, writeFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/serve-process.js';
import { useService } from '../helpers/service-suite.js';
import { runCli } from '../helpers/run-cli.js';
import { batchEnv, batchFile, journalFiles, stored } from './support.js';

// `docs submit --resume` of a batch that already finished: nothing is sent again (the finished
// batch's record is kept), the earlier results are reported again, exit 0. A line edited since is
// sent as the new body it is; a run without --resume is a new batch.

const service = useService({}, { faces: ['ada-done'] });
beforeAll(() => ensureBuilt(), 120_000);

const results = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { line: number; ok: boolean; document_id: string; resumed?: boolean });

describe('--resume of a finished batch', () => {
  it('sends nothing, reports the saved results (resumed) under --json, says so on stderr, exit 0', async () => {
    const { file, lines } = batchFile('ada-done', 'done-', 5);
    const env = batchEnv(service.key('pro'), service.baseUrl);
    const first = await runCli(['docs', 'submit', '--file', file, '--json'], { env });
    expect(first.code, first.stderr).toBe(0);
    const created = results(first.stdout);
    expect(created.map((r) => r.line).sort()).toEqual([1, 2, 3, 4, 5]);
    expect(journalFiles(env.FACECTL_CONFIG_DIR)).toEqual([]);

    for (let round = 0; round < 2; round++) {
      const before = service.stats.requests;
      const again = await runCli(['docs', 'submit', '--file', file, '--json', '--resume'], { env });
      expect(again.code, again.stderr).toBe(0);
      expect(service.stats.requests - before, 'requests sent by the resume').toBe(0);
      expect(again.stderr).toContain('batch already finished: 5 documents sent; nothing to do');
      expect(again.stderr).not.toContain('Nothing to resume');
      const saved = results(again.stdout);
      expect(saved).toHaveLength(5);
      for (const result of saved) {
        expect(result).toMatchObject({ ok: true, resumed: true });
        expect(result.document_id).toBe(created.find((r) => r.line === result.line)?.document_id);
      }
    }
    const docs = stored(service, 'done-');
    expect(docs.map((d) => d.label).sort()).toEqual(lines.map((l) => JSON.parse(l).label).sort());

    // Without --resume a run is a new batch, as before: every line is sent again.
    const plain = await runCli(['docs', 'submit', '--file', file], { env });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).not.toContain('already finished');
    expect(stored(service, 'done-')).toHaveLength(10);
  });

  it('says only that the batch had finished: no "Submitted" summary, no progress, before or after it', async () => {
    const { file } = batchFile('ada-done', 'only-', 2);
    const env = batchEnv(service.key('pro'), service.baseUrl);
    const first = await runCli(['docs', 'submit', '--file', file], { env });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain('Submitted 2 of 2 documents.');
    const again = await runCli(['docs', 'submit', '--file', file, '--resume'], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(first.stdout);
    expect(again.stderr).toBe('batch already finished: 2 documents sent; nothing to do\n');
    const json = await runCli(['docs', 'submit', '--file', file, '--resume', '--json'], { env });
    expect(json.code, json.stderr).toBe(0);
    expect(json.stderr).toBe('{"notice":"batch already finished: 2 documents sent; nothing to do"}\n');
    // A line added since is sent: then the summary is the true one, and no "already finished".
    writeFileSync(
      file,
      `${readFileSync(file, 'utf8')}${JSON.stringify({ alias: 'ada-done', label: 'only-3', content: 'three' })}\n`,
    );
    const added = await runCli(['docs', 'submit', '--file', file, '--resume'], { env });
    expect(added.code, added.stderr).toBe(0);
    expect(added.stderr).toContain('Submitted 3 of 3 documents (2 of them by an earlier run, not sent again).');
    expect(added.stderr).not.toContain('already finished');
  });

  it('standard input: --resume of the same finished input sends nothing (tab-separated output)', async () => {
    const { file } = batchFile('ada-done', 'stdin-done-', 3);
    const input = readFileSync(file, 'utf8');
    const env = batchEnv(service.key('pro'), service.baseUrl);
    const first = await runCli(['docs', 'submit', '-'], { env, stdin: input });
    expect(first.code, first.stderr).toBe(0);
    const before = service.stats.requests;
    const again = await runCli(['docs', 'submit', '--resume', '-'], { env, stdin: input });
    expect(again.code, again.stderr).toBe(0);
    expect(service.stats.requests - before).toBe(0);
    expect(again.stderr).toContain('batch already finished: 3 documents sent; nothing to do');
    expect(again.stdout).toBe(first.stdout);
    expect(stored(service, 'stdin-done-')).toHaveLength(3);
  });

  it('a file changed since it finished: --resume sends only the changed line, once', async () => {
    const { file, lines } = batchFile('ada-done', 'changed-', 4);
    const env = batchEnv(service.key('pro'), service.baseUrl);
    const first = await runCli(['docs', 'submit', '--file', file, '--json'], { env });
    expect(first.code, first.stderr).toBe(0);
    const edited = JSON.stringify({ alias: 'ada-done', label: 'changed-2', content: 'changed 2, second version' });
    writeFileSync(file, `${[...lines.slice(0, 2), edited, lines[3]].join('\n')}\n`);

    for (const expectSent of [1, 0]) {
      const before = service.stats.requests;
      const again = await runCli(['docs', 'submit', '--file', file, '--json', '--resume'], { env });
      expect(again.code, again.stderr).toBe(0);
      expect(service.stats.requests - before).toBe(expectSent);
      const out = results(again.stdout);
      expect(out.filter((r) => r.resumed !== true).map((r) => r.line)).toEqual(expectSent === 1 ? [3] : []);
      expect(out).toHaveLength(4);
      if (expectSent === 1) expect(again.stderr).not.toContain('already finished');
      else expect(again.stderr).toContain('batch already finished: 4 documents sent; nothing to do');
    }
    const contents = stored(service, 'changed-2').map((d) => d.content);
    expect(contents.sort()).toEqual([JSON.parse(lines[2] as string).content, 'changed 2, second version'].sort());
    expect(stored(service, 'changed-')).toHaveLength(5);
  });

  it('a file whose every line is new since it finished (edited): --resume refuses, --restart sends', async () => {
    const { file, lines } = batchFile('ada-done', 'rewritten-', 3);
    const env = batchEnv(service.key('pro'), service.baseUrl);
    const first = await runCli(['docs', 'submit', '--file', file, '--json'], { env });
    expect(first.code, first.stderr).toBe(0);
    // The same documents, their keys in another order (as another tool writes them): the same lines.
    const reordered = lines.map((l) => {
      const { alias, label, content } = JSON.parse(l) as Record<string, string>;
      return JSON.stringify({ content, label, alias });
    });
    writeFileSync(file, `${reordered.join('\n')}\n`);
    const before = service.stats.requests;
    const same = await runCli(['docs', 'submit', '--file', file, '--resume'], { env });
    expect(same.code, same.stderr).toBe(0);
    expect(same.stderr).toContain('batch already finished: 3 documents sent; nothing to do');
    // Every line edited: --resume refuses (the batch it would go on with holds none of them), --restart sends each once.
    writeFileSync(
      file,
      `${lines.map((l) => JSON.stringify({ ...JSON.parse(l), content: 'second version' })).join('\n')}\n`,
    );
    const refused = await runCli(['docs', 'submit', '--file', file, '--resume'], { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `error: nothing to resume: none of the 3 lines the earlier batch of ${file} submitted is in it now`,
    );
    expect(refused.stderr).toContain(
      'then --resume (it skips what was submitted); --restart drops that batch and sends every line as new',
    );
    expect(service.stats.requests).toBe(before);
    expect(stored(service, 'rewritten-')).toHaveLength(3);
    const restarted = await runCli(['docs', 'submit', '--file', file, '--restart'], { env });
    expect(restarted.code, restarted.stderr).toBe(0);
    const again = await runCli(['docs', 'submit', '--file', file, '--resume'], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('batch already finished: 3 documents sent; nothing to do');
    const contents = stored(service, 'rewritten-').map((d) => d.content);
    expect(contents.filter((c) => c === 'second version')).toHaveLength(3);
    expect(contents).toHaveLength(6);
  });

  it('a plain run of a file that begins as its finished batch did warns that it is a new batch; other lines do not', async () => {
    // A ring's find: lines appended to a finished file and the file run again made the earlier lines twice, silently.
    const { file, lines } = batchFile('ada-done', 'appended-', 4);
    const env = batchEnv(service.key('pro'), service.baseUrl);
    expect((await runCli(['docs', 'submit', '--file', file], { env })).code).toBe(0);
    writeFileSync(
      file,
      `${[...lines, JSON.stringify({ alias: 'ada-done', label: 'appended-4', content: 'new' })].join('\n')}\n`,
    );
    const again = await runCli(['docs', 'submit', '--file', file, '--json'], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(
      new RegExp(
        `^\\{"warning":"an earlier batch of ${file} \\(begun at \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\) finished with the same first lines: this run is a new batch, and the documents of the lines it shares with it are created again; \`--resume\` sends only the lines added or edited since"\\}$`,
        'm',
      ),
    );
    expect(stored(service, 'appended-')).toHaveLength(9);
    // Other documents under the same name: no warning.
    const { lines: other } = batchFile('ada-done', 'replaced-', 3);
    writeFileSync(file, `${other.join('\n')}\n`);
    const replaced = await runCli(['docs', 'submit', '--file', file], { env });
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(replaced.stderr).not.toContain('warning');
    // Standard input run again as it was (a newcomer's find: only a file was warned of).
    const piped = `${other.join('\n')}\n`;
    expect((await runCli(['docs', 'submit', '-'], { env, stdin: piped })).stderr).not.toContain('warning');
    const twice = await runCli(['docs', 'submit', '-'], { env, stdin: piped });
    expect(twice.code, twice.stderr).toBe(0);
    expect(twice.stderr).toMatch(
      /^warning: an earlier batch of standard input \(begun at [-\dT:]+Z\) finished with the same first lines: this run is a new batch/m,
    );
    expect(stored(service, 'replaced-')).toHaveLength(9);
  });
});
