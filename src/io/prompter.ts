import type { InputStream, OutputStream, Prompter } from '../context.js';
import { cancelledBy, CliError, ExitCode } from '../errors.js';

/** Questions on stderr (stdout carries data only); @inquirer/prompts (~50 ms) loads at the first; Ctrl-C: SIGINT. */
export function createPrompter(stdin: InputStream, stderr: OutputStream, signal: AbortSignal): Prompter {
  const context = { input: stdin, output: stderr, signal, clearPromptOnDone: false };
  /** `ended`: the answer when the terminal's input ends at the prompt (Ctrl-D). */
  const ask = async <T>(
    question: (prompts: typeof import('@inquirer/prompts')) => Promise<T>,
    ended: () => T,
  ): Promise<T> => {
    const prompts = await import('@inquirer/prompts');
    // Ctrl-Z, then `fg`: Node's readline pauses the input as the process goes on, which nothing resumes; the
    // event loop would empty and the prompt end as if the input had (Ctrl-D). Resumed once readline is done.
    const resume = () => setImmediate(() => stdin.resume());
    process.on('SIGCONT', resume);
    try {
      return await question(prompts);
    } catch (error) {
      const name = (error as Error | undefined)?.name;
      // Ctrl-C typed at a prompt is a key (the terminal is in raw mode), not the SIGINT the terminal would send its
      // foreground process group: sent here as it would be, so this process ends by it and a shell loop stops too.
      if (name === 'ExitPromptError' && !signal.aborted && /SIGINT$/.test((error as Error).message)) {
        let timer: NodeJS.Timeout | undefined;
        await new Promise((resolve) => {
          signal.addEventListener('abort', resolve, { once: true });
          timer = setTimeout(resolve, 1000); // (and keeps the process until the signal has come)
          process.kill(0, 'SIGINT');
        });
        clearTimeout(timer);
      } else if (name === 'ExitPromptError' && !signal.aborted) return ended();
      if (name === 'ExitPromptError' || name === 'AbortPromptError' || signal.aborted) throw cancelledBy(signal);
      throw error;
    } finally {
      process.off('SIGCONT', resume);
    }
  };
  const noAnswer = (): never => {
    throw new CliError('no answer: the input ended at the prompt (Ctrl-D)', ExitCode.error, { code: 'no_answer' });
  };
  return {
    input: (options) => ask((p) => p.input(options, context), noAnswer),
    password: (options) => ask((p) => p.password(options, context), noAnswer),
    // As Enter would: the question's default (No where a change is asked for).
    confirm: (options) =>
      ask(
        (p) => p.confirm(options, context),
        () => options.default ?? false,
      ),
  };
}
