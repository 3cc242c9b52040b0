// The shape of lib/settings.ts, the manifest of the stage settings.

/** The words of a space-separated list, as a union (the manifest lists functions so, one line a setting). */
export type Words<TList extends string> = TList extends `${infer Head} ${infer Rest}`
  ? Head | Words<Rest>
  : TList;

/** A value as serverless.yml reads it: `${env:NAME, 'fallback'}`, `${sls:stage}` and `${self:service}` resolved. */
export type Value = string | number | boolean;

/** A setting's least and greatest value, in its own unit: a duration such as `24h`, or a number. */
export interface Bounds {
  readonly min?: Value;
  readonly max?: Value;
}

export interface Setting<TStage extends string> {
  /** The variable the functions read it from; none: only the template or the operators' tools read it. */
  readonly variable?: string;
  /** The functions whose code reads `variable`, space-separated, or `every function`. */
  readonly readBy?: string;
  /** `default`, which a stage without a value of its own takes, and each named stage's. */
  readonly values: { readonly default: Value } & { readonly [TName in TStage]?: Value };
  readonly bounds?: Bounds;
  /** What it changes: its line of docs/stages.md (Markdown, links relative to docs/). */
  readonly description: string;
}

/** A variable the functions read that is no stage parameter: the same expression on every stage. */
export interface Variable {
  /** As serverless.yml writes it; none: Lambda sets it. */
  readonly value?: string;
  /** Given to every function (serverless.yml's `provider.environment`), whether it reads it or not. */
  readonly everyFunction?: true;
  readonly readBy: string;
}
