import type { Context } from '../context.js';

/**
 * value: as help names it (`<alias>`), else a switch (true when given); type: text by default, `int` whole `unit`s
 * from `min` to `max`, `usd` dollars (0 or more), `list` a,b,c; choices: the only values taken (help lists them);
 * suggest: what completion offers, others taken too; repeat: every value kept, in order; negate: `--no-<name>`,
 * true unless given; check: a further rule on the text (each item of a list): what is wrong, or undefined.
 */
export type FlagSpec = Readonly<{ value?: `<${string}>`; short?: `-${string}`; help: string; default?: string }> &
  Readonly<{ type?: 'int' | 'usd' | 'list'; min?: number; max?: number; unit?: string; repeat?: boolean }> &
  Readonly<{ choices?: readonly string[]; suggest?: readonly string[]; negate?: boolean }> &
  Readonly<{ check?: (text: string) => string | undefined }>;

export type Flags = Readonly<Record<string, FlagSpec>>;

export type ArgSpec = readonly [name: `<${string}>` | `[${string}]`, help: string];

type ValueOf<F> = F extends { readonly value: string }
  ? F extends { readonly type: 'int' | 'usd' }
    ? number
    : F extends { readonly type: 'list' } | { readonly repeat: true }
      ? string[]
      : F extends { readonly choices: readonly (infer C extends string)[] }
        ? C
        : string
  : boolean;

/** Switches and flags with a default always have a value; the others only when given. */
type AlwaysKeys<F> = {
  [K in keyof F]: F[K] extends { readonly value: string } ? (F[K] extends { readonly default: string } ? K : never) : K;
}[keyof F];

/** A verb's flags once checked, by their camel-case names: `--expires-in-days 30` is `{ expiresInDays: 30 }`. */
export type FlagValues<F> = { -readonly [K in AlwaysKeys<F>]: ValueOf<F[K]> } & {
  -readonly [K in Exclude<keyof F, AlwaysKeys<F>>]?: ValueOf<F[K]>;
};

type ArgValues<A extends readonly ArgSpec[]> = {
  -readonly [I in keyof A]: A[I] extends readonly [`<${string}>`, string] ? string : string | undefined;
};

export interface VerbSpec<F extends Flags = Flags, A extends readonly ArgSpec[] = readonly ArgSpec[], R = unknown> {
  /** The line a list of commands shows (else the description's first sentence). */
  readonly summary?: string;
  /** Paragraphs separated by an empty line; help wraps them. Lines that start with spaces stay as written. */
  readonly description: string;
  readonly args?: A;
  readonly flags?: F;
  readonly examples: readonly string[];
  /** The work, once the flags are checked (a bad value is refused, exit 2, before). */
  run(ctx: Context, flags: FlagValues<F>, ...args: ArgValues<A>): Promise<R>;
}

export type GroupSpec = Readonly<{ summary?: string; description: string; verbs: Readonly<Record<string, AnyVerb>> }>;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyVerb = VerbSpec<any, any>;
