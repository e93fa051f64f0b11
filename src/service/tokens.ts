/**
 * Token counts with a real BPE tokenizer (o200k_base, vocabulary shipped in the gpt-tokenizer
 * package). Loaded on first use: it costs about 200 ms, which `facectl serve` pays once and every
 * other command never.
 */
type CountTokens = (text: string) => number;
let loading: Promise<CountTokens> | undefined;

export function loadTokenizer(): Promise<CountTokens> {
  loading ??= import('gpt-tokenizer/encoding/o200k_base').then((m) => m.countTokens as CountTokens);
  return loading;
}

export async function countTokens(text: string): Promise<number> {
  if (text.length === 0) return 0;
  return (await loadTokenizer())(text);
}

/** A thread's count: the sum over its messages' contents. */
export async function countMessageTokens(contents: readonly string[]): Promise<number> {
  const count = await loadTokenizer();
  let total = 0;
  for (const content of contents) if (content.length > 0) total += count(content);
  return total;
}
