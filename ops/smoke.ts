/**
 * `npm run smoke -- --base-url <url>`: a non-destructive smoke test of a deployed stage,
 * logging in as the test user in SMOKE_USERNAME and SMOKE_PASSWORD. See ops/smoke/usage.ts,
 * or run `npm run smoke -- --help`.
 */
import { runSmoke } from './smoke/main.ts';

process.exitCode = await runSmoke(process.argv.slice(2), {
  env: process.env,
  stdout: (line) => process.stdout.write(`${line}\n`),
  stderr: (line) => process.stderr.write(`${line}\n`),
});
