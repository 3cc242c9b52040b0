/**
 * When `npm start` is asked to stop: SIGINT (Ctrl-C, an IDE's stop button), SIGTERM (a process
 * manager, `timeout`) or SIGHUP (its terminal closed), sent to dev/start.ts or only to the npm
 * that runs it. The script is `exec node dev/start.ts`, so the shell npm runs it in becomes
 * this process and npm's forwarded SIGINT and SIGTERM reach it: dash (Debian's sh) would
 * otherwise hold a SIGINT until its command ended. npm killed outright orphans us: the parent
 * changing is a request to stop as well.
 */

/** Calls `stop` (perhaps more than once) when the stack should stop, npm killed included. */
export function onStopRequest(stop: () => void): void {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, stop);
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) stop();
  }, 250).unref();
}
