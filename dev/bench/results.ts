/** What each part of the benchmark measures, as a child process hands it to the report. */
import type { Sample } from './measure.ts';

/** The warm authorizer with one revocation cache setting. */
export interface AuthorizerResult {
  readonly part: 'authorizer';
  readonly revocationCacheTtl: string;
  /**
   * The real handler on a REQUEST event; bare jose jwtVerify; jose jwtVerify and the EMF line
   * of an allowed call; bare node:crypto Ed25519 verify.
   */
  readonly samples: {
    readonly handler: Sample;
    readonly jose: Sample;
    readonly joseMetrics: Sample;
    readonly floor: Sample;
  };
}

/** The warm login functions at one bcrypt cost. */
export interface LoginResult {
  readonly part: 'login';
  readonly cost: number;
  readonly samples: {
    readonly login: Sample;
    readonly loginExtended: Sample;
    readonly compare: Sample;
    /** One eventually consistent GetItem of the user on the same client settings: a round trip's floor. */
    readonly getItem: Sample;
    /** The login's floor: the compare between its two DynamoDB steps, made bare (same six requests). */
    readonly floor: Sample;
    /** The login handler from a source the name knows, while strangers have locked the name. */
    readonly knownSourceLogin: Sample;
    /** Its floor: the same compare between the known-source path's nine requests, made bare. */
    readonly knownSourceFloor: Sample;
  };
}

/** The warm client credentials grant (functions/oauth-token.ts) and token introspection (functions/oauth-introspect.ts). */
export interface GrantResult {
  readonly part: 'grant';
  readonly samples: {
    readonly grant: Sample;
    /** matchSecret: SHA-256 of the presented secret, compared with two stored digests. */
    readonly secretCheck: Sample;
    /** One consistent GetItem of the client item, as the grant reads it. */
    readonly getItem: Sample;
    /** One jose sign of a token with the grant's header and claims, same key. */
    readonly sign: Sample;
    /** The grant's floor: the secret check between its two DynamoDB steps made bare (same five requests), then the sign. */
    readonly floor: Sample;
    /** Token introspection (functions/oauth-introspect.ts) of the grant's token, active, its client's state cached. */
    readonly introspect: Sample;
    /** One jose jwtVerify of that token with the authorizer's pinned options. */
    readonly verify: Sample;
    /** Introspection's floor: the grant's two DynamoDB steps and secret check made bare, then the verify. */
    readonly introspectFloor: Sample;
    /** The private_key_jwt grant of a client of keys (two live), a new assertion per call (dev/bench/key-grant.ts). */
    readonly keyGrant: Sample;
    /** Its floor: the grant's two DynamoDB steps around the assertion's jwtVerify and its jti's conditional UpdateItem, then the sign. */
    readonly keyGrantFloor: Sample;
    /** A call with a DPoP-bound token: the authorizer's handler, then the protected function's proof check (dev/bench/dpop.ts). */
    readonly dpopCall: Sample;
    /** Its floor: jose jwtVerify of the token, of the proof with its embedded key, and the proof's jti's conditional UpdateItem. */
    readonly dpopFloor: Sample;
    /** The grant from a source the client knows, while strangers have locked the client. */
    readonly knownSourceGrant: Sample;
    /** Its floor: the secret check between the known-source path's eight requests made bare, then the sign. */
    readonly knownSourceFloor: Sample;
    /** The first grant of its secret's hour: the secret's last use due, and written (dev/bench/last-use.ts). */
    readonly lastUseGrant: Sample;
    /** Its floor: the grant's floor with the last use's conditional UpdateItem beside the sign. */
    readonly lastUseFloor: Sample;
  };
}

/** A platform's grants (dev/bench/platform.ts): ours against their floors, and beside node-oidc-provider. */
export interface PlatformResult {
  readonly part: 'platform';
  readonly samples: {
    /** The token handler, grant_type=authorization_code with the PKCE verifier, by HTTP Basic. */
    readonly exchange: Sample;
    /** Its floor: the authentication made bare, the code's spend, the connection's read, the session's write, two signs. */
    readonly exchangeFloor: Sample;
    /** The token handler, grant_type=refresh_token of a connection. */
    readonly refresh: Sample;
    /** Its floor: the authentication made bare, one jwtVerify, the connection's read, the rotation's write, two signs. */
    readonly refreshFloor: Sample;
    /** The client authentication made bare (dev/bench/client-auth.ts): two steps, five requests. */
    readonly authentication: Sample;
    /** One consistent GetItem of the platform's client item: the authentication without the throttle's counting. */
    readonly clientRead: Sample;
    /** Ours behind a bare node:http server, and node-oidc-provider, over loopback by one client. */
    readonly httpClientCredentials: Sample;
    readonly peerClientCredentials: Sample;
    readonly httpExchange: Sample;
    readonly peerExchange: Sample;
    readonly httpRefresh: Sample;
    readonly peerRefresh: Sample;
  };
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

/** One cold run in a fresh process, in ms since that process started. */
export interface ColdStartSample {
  /** From the process's start to the runner's first line: Node.js itself. */
  readonly startMs: number;
  readonly importMs: number;
  readonly firstCallMs: number;
  /** The first call's HTTP status, or `policy` for the authorizer's answer. */
  readonly status: number | string;
}

/** Medians over a variant's runs. */
export interface ColdStartVariant {
  readonly runs: number;
  readonly startMs: number;
  readonly importMs: number;
  readonly firstCallMs: number;
  /** Median of start + import + first call, per run. */
  readonly totalMs: number;
  readonly statuses: readonly string[];
}

export interface ColdStartFunction {
  readonly function: string;
  readonly artifact: string;
  /** `empty`, `bundled`, `unbundled`, and for the authorizer `bundled, SDK from the runtime`. */
  readonly variants: Readonly<Record<string, ColdStartVariant>>;
  readonly note?: string;
}

export interface ColdStartResult {
  readonly part: 'cold-start';
  readonly functions: readonly ColdStartFunction[];
}

/** The local stack (serverless-offline) under autocannon. */
export interface LoadRoute {
  readonly route: string;
  readonly connections: number;
  readonly seconds: number;
  readonly requests: number;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Connection errors, timeouts and answers other than the expected status. */
  readonly errors: number;
  /** The work inside the function, timed in-process in the same run (median, ms). */
  readonly workMs: number;
  readonly workLabel: string;
}

export interface LoadResult {
  readonly part: 'load';
  readonly routes: readonly LoadRoute[];
}

export interface ImportBenchResult {
  readonly part: 'import';
  readonly users: number;
  readonly customers: number;
  /** Lines of the file: customers and users. */
  readonly records: number;
  /** DynamoDB items both runs write. */
  readonly items: number;
  /** The bare BatchWriteItem loop writing the same items. */
  readonly bareSeconds: number;
  readonly importSeconds: number;
  /** Import throughput over the bare loop's (1 = as fast as the floor). */
  readonly ratio: number;
  readonly baseRssMiB: number;
  readonly peakRssMiB: number;
}

/** A bare bcryptjs compare per cost, and the cost each AWS stage imports up to. */
export interface CompareResult {
  readonly part: 'compare';
  readonly costs: readonly { readonly cost: number; readonly sample: Sample }[];
  /** From serverless.yml: the highest cost each stage imports, and its login memory (MB). */
  readonly stages: readonly {
    readonly stage: string;
    readonly importBcryptMaxCost: number;
    readonly loginMemorySize: number;
  }[];
}

export type PartResult =
  | AuthorizerResult
  | CompareResult
  | LoginResult
  | GrantResult
  | PlatformResult
  | RoundTripsResult
  | ColdStartResult
  | LoadResult
  | ImportBenchResult;

export interface Bundle {
  readonly function: string;
  readonly zipBytes: number;
  readonly entry: string;
  readonly rawBytes: number;
  readonly gzipBytes: number;
}

/** A floor built with the same esbuild options as the function it stands beside. */
export interface FloorBundle {
  readonly function: string;
  /** As the cold-start part names the variant, e.g. `floor: jose + GetItem`. */
  readonly floor: string;
  readonly rawBytes: number;
  readonly gzipBytes: number;
}

/** The line a child writes to stdout before its result as JSON. */
export const RESULT_MARKER = 'BENCH_RESULT ';

/** The login bundle as it was before one client per container (3525fe7): each store its own. */
export const CLIENT_PER_STORE = 'bundled, a DynamoDB client per store';
