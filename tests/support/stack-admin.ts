/** The admin CLI against a local stack (dev/local/stack.ts), as an operator runs `npm run admin -- …`. */
import type { LocalStack } from '../../dev/local/stack.ts';
import { runScript } from './run-script.ts';

type Stack = Pick<LocalStack, 'dataDir' | 'ports'>;

/** Runs the admin CLI with `args` (and `stdin`) against `stack`: its stdout, or an error with its stderr. */
export async function stackAdmin(stack: Stack, args: readonly string[], stdin?: string): Promise<string> {
  const run = await runScript('ops/admin.ts', args, {
    env: { ...process.env, DATA_DIR: stack.dataDir, DYNAMODB_PORT: String(stack.ports.dynamodb) },
    ...(stdin !== undefined && { stdin }),
  });
  if (run.code !== 0) throw new Error(`admin ${args.join(' ')} exited ${run.code}:\n${run.stderr}`);
  return run.stdout;
}

/** The value of a `name:  value` line the CLI printed (`client id`, `secret id`, `secret`). */
export function printedValue(stdout: string, name: string): string {
  const value = new RegExp(`^${name}: +(\\S+)$`, 'm').exec(stdout)?.[1];
  if (value === undefined) throw new Error(`the CLI printed no ${name}:\n${stdout}`);
  return value;
}

/** `client add`: a client of `customerId` with `scopes` on `stack`, its id and its secret as printed once. */
export async function addStackClient(stack: Stack, customerId: string, scopes: readonly string[]) {
  const stdout = await stackAdmin(stack, [
    'client',
    'add',
    customerId,
    ...scopes.flatMap((scope) => ['--scope', scope]),
  ]);
  return { clientId: printedValue(stdout, 'client id'), clientSecret: printedValue(stdout, 'secret') };
}
