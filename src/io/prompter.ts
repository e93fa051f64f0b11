import type { InputStream, OutputStream, Prompter } from '../context.js';
import { cancelledBy } from '../errors.js';

/** Questions on stderr (stdout carries data only); @inquirer/prompts (~50 ms) loads at the first; Ctrl-C: exit 130. */
export function createPrompter(stdin: InputStream, stderr: OutputStream, signal: AbortSignal): Prompter {
  const context = { input: stdin, output: stderr, signal, clearPromptOnDone: false };
  const ask = async <T>(question: (prompts: typeof import('@inquirer/prompts')) => Promise<T>): Promise<T> => {
    const prompts = await import('@inquirer/prompts');
    try {
      return await question(prompts);
    } catch (error) {
      const name = (error as Error | undefined)?.name;
      if (name === 'ExitPromptError' || name === 'AbortPromptError' || signal.aborted) throw cancelledBy(signal);
      throw error;
    }
  };
  return {
    input: (options) => ask((p) => p.input(options, context)),
    password: (options) => ask((p) => p.password(options, context)),
    confirm: (options) => ask((p) => p.confirm(options, context)),
  };
}
