/**
 * What every admin command is given: the target's stores, the operator's input and output,
 * who the operator is, the stage's parameters and a clock. main.ts builds the real one; tests
 * build their own.
 */

import type { StageParams } from '../../infra/stage-params.ts';
import type { AccountRepository } from '../../lib/accounts/repository.ts';
import type { AuditTrail } from '../../lib/audit/audit.ts';
import type { ClientRepository } from '../../lib/clients/clients.ts';
import type { SecurityPolicies } from '../../lib/customer/administration.ts';
import type { PasskeyStore } from '../../lib/passkeys/store.ts';
import type { ThrottleStore } from '../../lib/throttle/throttle.ts';
import type { BulkAccountStore } from '../accounts/bulk-dynamodb.ts';
import type { LocalKeyFiles } from '../keys/local.ts';
import type { ParameterStore } from './keys.ts';
import type { Progress } from './progress.ts';
import type { Target } from './target.ts';

export interface CommandContext {
  readonly target: Target;
  /** The account store of the target; opened on first use. */
  accounts(): AccountRepository;
  /** The API clients of the target (on its accounts table); opened on first use. */
  clients(): ClientRepository;
  /** The failed-login counters of the target's login throttle; opened on first use. */
  loginFailures(): ThrottleStore;
  /** The accounts table in bulk (import, export, listings); opened on first use. */
  bulk(): BulkAccountStore;
  /** The audit trail of the target (its audit table); opened on first use. */
  audit(): AuditTrail;
  /** The users' passkeys on the target; opened on first use. */
  passkeys(): PasskeyStore;
  /** The customers' security policies on the target; opened on first use. */
  policies(): SecurityPolicies;
  /** The operator as audit events name it: `operator:<name>` (ops/admin/audit.ts operatorActor). */
  readonly actor: string;
  /** The lines of a file, read anew on each call; a missing file fails on the first call. */
  fileLines(path: string): () => AsyncIterable<string>;
  /** Progress on stderr: a bar on a terminal, plain lines otherwise. */
  progress(label: string): Progress;
  /** Whether stdout is a terminal: listings print a table there, JSON Lines elsewhere. */
  readonly stdoutIsTTY: boolean;
  /** The first line of stdin. */
  readPassword(): Promise<string>;
  /** The target stage's parameters (bcrypt cost, token lifetimes, key reload interval, KMS key). */
  stageParams(): StageParams;
  /** Makes the local key files if missing (ops/keys/local.ts). */
  ensureLocalKeys(dataDir: string): Promise<LocalKeyFiles & { created: boolean }>;
  /** Where the local key files are (ops/keys/local.ts). */
  localKeyFiles(dataDir: string): LocalKeyFiles;
  /** The SSM parameters of a region. */
  parameters(region: string): ParameterStore;
  now(): Date;
  /** One result line or JSON document, to stdout. */
  print(text: string): void;
  /** One line to stderr about something that went wrong without failing the command. */
  warn(text: string): void;
}
