/**
 * The words a function's environment is written in (environment.ts): each variable a key with how it is read, its
 * bounds and its default, as plain data. From one such spec follow both sides of the contract between the stack and a
 * function — the type the stack, the local run and the chaos world build (`EnvironmentOf`, so a renamed or missing
 * variable fails to compile), and what the function's loader parses at cold start (functions/commons/config.ts
 * `parseEnvironment`, typed `ValuesOf`) — so the two cannot drift apart.
 */

interface Flags {
  /**
   * The stack always sets it: a setting, or a figure checked at synth (dispatch-timing.ts). Its default is only for
   * a run without the stack (the local run, a test); forgetting it in the stack is a compile error.
   */
  readonly deployed?: true;
  /** Lambda sets it itself (a reserved variable the stack may not set): read by the function, built by nobody. */
  readonly byLambda?: true;
}

/** A whole number in [min, max]; `default` when unset. */
export interface IntKey extends Flags {
  readonly kind: 'int';
  readonly min: number;
  readonly max: number;
  readonly default: number;
}

/** Text; `optional` may be unset. `V` narrows what the stack may write (the values the loader then checks). */
export interface TextKey<V extends string = string> extends Flags {
  readonly kind: 'text';
  readonly optional: boolean;
  /** nonEmpty: at least one character; email: an address; a pattern with what it must be. */
  readonly check?: 'nonEmpty' | 'email' | { readonly pattern: RegExp; readonly must: string };
  /** Type only: the values the stack may write. */
  readonly values?: readonly V[];
}

/** One of `values`; `default` when unset. */
export interface OneOfKey<V extends string = string> extends Flags {
  readonly kind: 'oneOf';
  readonly values: readonly V[];
  readonly default: V;
}

export type EnvKey = IntKey | TextKey | OneOfKey;
export type EnvSpec = { readonly [name: string]: EnvKey };

/** No flag: a key the stack may leave to its default. */
type NoFlags = Record<never, never>;

export const int = <const F extends Flags = NoFlags>(min: number, max: number, fallback: number, flags?: F) =>
  ({ kind: 'int', min, max, default: fallback, ...flags }) as IntKey & F;
/** Required text. */
export const text = <V extends string = string, const F extends Flags = NoFlags>(check?: TextKey['check'], flags?: F) =>
  ({ kind: 'text', optional: false, ...(check === undefined ? {} : { check }), ...flags }) as TextKey<V> & {
    readonly optional: false;
  } & F;
/** Text that may be unset. */
export const optionalText = <V extends string = string, const F extends Flags = NoFlags>(
  check?: TextKey['check'],
  flags?: F,
) =>
  ({ kind: 'text', optional: true, ...(check === undefined ? {} : { check }), ...flags }) as TextKey<V> & {
    readonly optional: true;
  } & F;
export const oneOf = <V extends string, const F extends Flags = NoFlags>(
  values: readonly V[],
  fallback: V,
  flags?: F,
) => ({ kind: 'oneOf', values, default: fallback, ...flags }) as OneOfKey<V> & F;
/** Spelled where a key is written: the stack always sets it (Flags.deployed). */
export const DEPLOYED = { deployed: true } as const;

type Simplify<T> = { [K in keyof T]: T[K] } & {};
type Built<S> = { [K in keyof S]: S[K] extends { readonly byLambda: true } ? never : K }[keyof S];
type Unset<S> = {
  [K in keyof S]: S[K] extends { readonly default: unknown } | { readonly optional: true } ? K : never;
}[keyof S];
type Deployed<S> = { [K in keyof S]: S[K] extends { readonly deployed: true } ? K : never }[keyof S];
type TextOf<K> = K extends OneOfKey<infer V> ? V : K extends TextKey<infer V> ? V : string;

/**
 * The variables the stack sets for a function with this spec, each as text: what has no default, and what the stack
 * always sets (`deployed`), is required; the rest may be left to its default.
 */
export type EnvironmentOf<S extends EnvSpec> = Simplify<
  { readonly [K in Exclude<Built<S>, Exclude<Unset<S>, Deployed<S>>>]: TextOf<S[K]> } & {
    readonly [K in Extract<Built<S>, Exclude<Unset<S>, Deployed<S>>>]?: TextOf<S[K]>;
  }
>;

/** The variables a run without the stack sets (the local run, the chaos world, a test): only what has no default. */
export type RunEnvironmentOf<S extends EnvSpec> = Simplify<
  { readonly [K in Exclude<Built<S>, Unset<S>>]: TextOf<S[K]> } & {
    readonly [K in Extract<Built<S>, Unset<S>>]?: TextOf<S[K]>;
  }
>;

/** What the function reads, parsed: a number as a number, one of a set as its value, unset optional text undefined. */
export type ValuesOf<S extends EnvSpec> = {
  readonly [K in keyof S]: S[K] extends IntKey
    ? number
    : S[K] extends OneOfKey<infer V>
      ? V
      : S[K] extends { readonly optional: true }
        ? string | undefined
        : string;
};

/** The variables the stack must set for a function with this spec (at run time, as EnvironmentOf requires them). */
export const keysTheStackSets = (spec: EnvSpec): string[] =>
  Object.entries(spec)
    .filter(([, key]) => key.deployed === true || (key.kind === 'text' && !key.optional && key.byLambda !== true))
    .map(([name]) => name);
