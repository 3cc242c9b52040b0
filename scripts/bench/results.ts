/** What each part of the benchmark measures, as a child process hands it to the report. */
import type { Sample } from './measure.ts';

/** The warm authorizer with one revocation cache setting. */
export interface AuthorizerResult {
  readonly part: 'authorizer';
  readonly revocationCacheTtl: string;
  /** The real handler on a REQUEST event; bare jose jwtVerify; bare node:crypto Ed25519 verify. */
  readonly samples: { readonly handler: Sample; readonly jose: Sample; readonly floor: Sample };
}

/** The warm login functions at one bcrypt cost. */
export interface LoginResult {
  readonly part: 'login';
  readonly cost: number;
  readonly samples: { readonly login: Sample; readonly loginExtended: Sample; readonly compare: Sample };
}

/** The DynamoDB requests one operation made, as counted at the wire. */
export interface RoundTrips {
  readonly operation: string;
  readonly total: number;
  /** Groups of requests that overlap in time, one after the other: the latency path. */
  readonly sequential: number;
  /** Requests per DynamoDB API action, e.g. { GetItem: 1 }. */
  readonly byAction: Readonly<Record<string, number>>;
  /** Totals of every call counted, when they differ between calls (else the one value). */
  readonly totals: readonly number[];
}

export interface RoundTripsResult {
  readonly part: 'round-trips';
  readonly operations: readonly RoundTrips[];
}

export type PartResult = AuthorizerResult | LoginResult | RoundTripsResult;

export interface Bundle {
  readonly function: string;
  readonly zipBytes: number;
  readonly entry: string;
  readonly rawBytes: number;
  readonly gzipBytes: number;
}

/** The line a child writes to stdout before its result as JSON. */
export const RESULT_MARKER = 'BENCH_RESULT ';
