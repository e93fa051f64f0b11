import { describe, expect, it } from 'vitest';
import { argv, runInProcess } from '../helpers/unit-harness.js';

/** `help help`, suggestions for a mistyped command, and the two documents of a lookup that finds nothing. */

describe('help help', () => {
  it.each([[argv`help help`], [argv`help --help`]])('%j prints the page of help itself, exit 0', async (args) => {
    const { code, stdout, stderr } = await runInProcess(args);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(
      /^Usage: facectl help \[flags\] \[command\.\.\.\]\n\nShow help for a command: `facectl help A B`/,
    );
    expect(stdout).toMatch(/Examples:\n {2}\$ facectl help\n {2}\$ facectl help docs submit\n$/);
  });

  it('help alone still lists the commands, help with a topic is that topic', async () => {
    const alone = await runInProcess(argv`help`);
    expect(alone.code).toBe(0);
    expect(alone.stdout).toContain('\nCommands:\n');
    const topic = await runInProcess(argv`help faces`);
    const direct = await runInProcess(argv`faces --help`);
    expect(topic.stdout).toBe(direct.stdout);
  });
});

describe('an unknown command', () => {
  it('far from every command: no suggestion (nosuch is not oauth)', async () => {
    const { code, stdout, stderr } = await runInProcess(argv`nosuch`);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      "error: unknown command 'nosuch'\nusage: facectl [flags] [command]\nrun `facectl --help` for details\n",
    );
  });

  it('with --help: the unknown command, exit 2, not the help of the group above it (as gh)', async () => {
    const top = await runInProcess(argv`documents --help`);
    expect(top).toMatchObject({ code: 2, stdout: '' });
    expect(top.stderr).toBe(
      "error: unknown command 'documents'\nusage: facectl [flags] [command]\nrun `facectl --help` for details\n",
    );
    const group = await runInProcess(argv`faces crate -h`);
    expect(group).toMatchObject({ code: 2, stdout: '' });
    expect(group.stderr).toMatch(/^error: unknown command 'crate'\n\(Did you mean create\?\)\n/);
    expect((await runInProcess(argv`faces --help`)).code).toBe(0);
  });

  it('under --json: one JSON error, no suggestion', async () => {
    const { code, stdout, stderr } = await runInProcess(argv`nosuch --json`);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(JSON.parse(stderr)).toEqual({ error: { code: 'usage', message: "unknown command 'nosuch'" } });
  });

  it.each([
    [argv`fcaes get ada`, 'fcaes', 'faces', 'facectl'],
    [argv`docs sbumit --label x`, 'sbumit', 'submit', 'facectl docs'],
    [argv`auth stauts`, 'stauts', 'status', 'facectl auth'],
  ])('%j is close to a command: suggested', async (args, wrong, near, group) => {
    const { code, stderr } = await runInProcess(args);
    expect(code).toBe(2);
    expect(stderr).toBe(
      `error: unknown command '${wrong}'\n(Did you mean ${near}?)\n` +
        `usage: ${group} [flags] [command]\nrun \`${group} --help\` for details\n`,
    );
  });

  it('a subcommand far from every verb of its group: no suggestion', async () => {
    const { code, stderr } = await runInProcess(argv`faces nosuch`);
    expect(code).toBe(2);
    expect(stderr).toContain("error: unknown command 'nosuch'\nusage: facectl faces");
    expect(stderr).not.toContain('Did you mean');
  });
});

describe('a lookup that finds nothing, under --json (as documented in the README)', () => {
  it('config get of an unset setting: the document (value null) on stdout, the not_set error on stderr, exit 1', async () => {
    const { code, stdout, stderr } = await runInProcess(argv`config get base_url --json`);
    expect(code).toBe(1);
    expect(JSON.parse(stdout)).toEqual({ key: 'base_url', value: null, profile: 'default' });
    expect(JSON.parse(stderr).error).toMatchObject({ code: 'not_set' });
    // Without --json: nothing on stdout.
    const plain = await runInProcess(argv`config get base_url`);
    expect({ code: plain.code, stdout: plain.stdout }).toEqual({ code: 1, stdout: '' });
    expect(plain.stderr).toContain('error: base_url is not set in profile "default"');
  });

  it('auth status logged out: the status (logged_in false) on stdout, the not_authenticated error on stderr, exit 3', async () => {
    const { code, stdout, stderr } = await runInProcess(argv`auth status --json`);
    expect(code).toBe(3);
    expect(JSON.parse(stdout)).toMatchObject({ logged_in: false, key_prefix: null, profile: 'default' });
    expect(JSON.parse(stderr).error).toMatchObject({ code: 'not_authenticated' });
  });
});
