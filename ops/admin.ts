/**
 * `npm run admin -- <command>`: the operator CLI (users, pickup addresses, API clients, keys,
 * import, export).
 * See ops/admin/program.ts, or run `npm run admin -- help`.
 */
import { runAdmin } from './admin/main.ts';
import { passwordReader } from './admin/stdin.ts';

process.exitCode = await runAdmin(process.argv.slice(2), {
  env: process.env,
  cwd: process.cwd(),
  stdout: (text) => process.stdout.write(`${text}\n`),
  stderr: (text) => process.stderr.write(`${text}\n`),
  readPassword: passwordReader(process.stdin, process.stderr),
  stdoutIsTTY: process.stdout.isTTY === true,
  stderrIsTTY: process.stderr.isTTY === true,
});
