/**
 * The admin CLI as a function: argv in, exit status out. Everything from the outside world
 * (environment, working directory, stdin, stdout, stderr, the stores) is passed in, so tests
 * run it in-process; ops/admin.ts passes the real ones.
 */
import { createReadStream } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { readStageParams, type StageParams } from '../../infra/stage-params.ts';
import type { Env } from '../../lib/config.ts';
import { ensureLocalKeys, localKeyFiles } from '../keys/local.ts';
import { operatorActor } from './audit.ts';
import { parseInvocation } from './cli.ts';
import { runCommand } from './commands.ts';
import { csvUserLines } from './csv.ts';
import { CliError, describeFailure, failure, oneLine } from './errors.ts';
import { createSsmParameterStore, type ParameterStore } from './keys-store.ts';
import { createProgress } from './progress.ts';
import { type OpenedStores, openDynamoStores, resolveTarget, type Target } from './target.ts';

export interface AdminDeps {
  readonly env: Env;
  /** DATA_DIR is resolved against it. */
  readonly cwd: string;
  /** Writes one line (or JSON document) to stdout; the newline is added by the writer. */
  readonly stdout: (text: string) => void;
  /** Writes one line to stderr. */
  readonly stderr: (text: string) => void;
  /** The first line of stdin. Called only by commands that set a password. */
  readonly readPassword: () => Promise<string>;
  /** The account store, failed-login counters, bulk store and audit trail of a target. Default: its DynamoDB tables. */
  readonly openStores?: (target: Target) => OpenedStores;
  /** SSM of a region. Default: AWS SSM through the credential chain. */
  readonly parameters?: (region: string) => ParameterStore;
  /** A stage's parameters. Default: serverless.yml's, `${env:…}` resolved from `env`. */
  readonly stageParams?: (stage: string) => StageParams;
  /** Default: the system clock. */
  readonly now?: () => Date;
  /** Whether stdout / stderr are terminals (a table, a progress bar). Default: no. */
  readonly stdoutIsTTY?: boolean;
  readonly stderrIsTTY?: boolean;
}

/** The lines of `path` (against `cwd`), streamed; read anew on each call. */
const fileLines = (cwd: string, path: string) =>
  async function* lines() {
    const input = createReadStream(resolve(cwd, path), { encoding: 'utf8' });
    const opened = new Promise<void>((ready, fail) => {
      input.once('open', () => ready());
      input.once('error', fail);
    });
    try {
      await opened;
    } catch (error) {
      throw failure(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? oneLine(error)}`);
    }
    if (/\.csv$/i.test(path)) yield* csvUserLines(input, path);
    else yield* createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  };

/** Runs one invocation. Resolves to the exit status: 0 done, 1 failed, 2 usage error. */
export async function runAdmin(argv: readonly string[], deps: AdminDeps): Promise<number> {
  let target: Target | undefined;
  let opened: OpenedStores | undefined;
  try {
    const invocation = parseInvocation(argv);
    if (invocation.kind === 'help') {
      deps.stdout(invocation.text);
      return invocation.exitCode;
    }
    const resolved = resolveTarget(invocation.target, deps.env, deps.cwd);
    target = resolved;
    const stores = (): OpenedStores => {
      opened ??= (deps.openStores ?? openDynamoStores)(resolved);
      return opened;
    };
    await runCommand(invocation.command, {
      target: resolved,
      accounts: () => stores().accounts,
      clients: () => stores().bulk.clients,
      loginFailures: () => stores().loginFailures,
      bulk: () => stores().bulk,
      audit: () => stores().audit,
      passkeys: () => stores().passkeys,
      policies: () => stores().policies,
      actor: operatorActor(deps.env),
      fileLines: (path) => fileLines(deps.cwd, path),
      progress: (label) => createProgress(label, { tty: deps.stderrIsTTY === true, write: deps.stderr }),
      stdoutIsTTY: deps.stdoutIsTTY === true,
      readPassword: deps.readPassword,
      stageParams: () => {
        try {
          return (deps.stageParams ?? ((stage) => readStageParams(stage, deps.env)))(resolved.stage);
        } catch (error) {
          throw failure(`cannot read the parameters of stage ${resolved.stage}: ${oneLine(error)}`);
        }
      },
      ensureLocalKeys,
      localKeyFiles,
      parameters: deps.parameters ?? createSsmParameterStore,
      now: deps.now ?? (() => new Date()),
      print: deps.stdout,
      warn: (text) => deps.stderr(`warning: ${text}`),
    });
    return 0;
  } catch (error) {
    deps.stderr(`error: ${describeFailure(error, target)}`);
    return error instanceof CliError ? error.exitCode : 1;
  } finally {
    opened?.close();
  }
}
