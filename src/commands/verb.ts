import type { Context } from '../context.js';

export interface FlagSpec {
  /** The value as help names it (`<alias>`); a flag without one is a switch: true when given. */
  readonly value?: `<${string}>`;
  readonly short?: `-${string}`;
  readonly help: string;
  /** Text by default; `int`: whole `unit`s, `min` to `max`; `usd`: dollars, 0 or more; `list`: a,b,c. */
  readonly type?: 'int' | 'usd' | 'list';
  readonly min?: number;
  readonly max?: number;
  readonly unit?: string;
  /** The only values taken (help lists them); `suggest`: values completion offers, where others are taken too. */
  readonly choices?: readonly string[];
  readonly suggest?: readonly string[];
  readonly default?: string;
  /** The flag may be given again; every value is kept, in order. */
  readonly repeat?: boolean;
  /** A switch written `--no-<name>`: true unless given. */
  readonly negate?: boolean;
  /** A further rule on the text (on each item of a list): what is wrong with it, or undefined. */
  readonly check?: (text: string) => string | undefined;
}

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
  /** Shell lines, shown under Examples. */
  readonly examples: readonly string[];
  /** The work, once the flags are checked (a bad value is refused, exit 2, before). */
  run(ctx: Context, flags: FlagValues<F>, ...args: ArgValues<A>): Promise<R>;
}

export interface GroupSpec {
  readonly summary?: string;
  readonly description: string;
  readonly verbs: Readonly<Record<string, AnyVerb>>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyVerb = VerbSpec<any, any>;
