/**
 * When `npm start` is asked to stop: SIGINT (Ctrl-C, an IDE's stop button), SIGTERM (a process
 * manager, `timeout`) or SIGHUP (its terminal closed), sent to dev/start.ts or only to the npm
 * that runs it. npm passes SIGINT and SIGTERM on to the `sh -c` it runs the script in, and
 * the shell passes nothing on: it dies of SIGTERM and SIGHUP, orphaning us, and dash (Debian's
 * and Ubuntu's sh) holds a SIGINT until its command has ended, so the shell waking is taken
 * for one. (A SIGTSTP to the process group of an `npm start` without a terminal, which stops
 * nothing, wakes the shell as well, and so stops the stack.)
 */
import { readFileSync } from 'node:fs';

const read = (file: string) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined; // no /proc (not Linux), or the process is gone
  }
};

/** The parent of `pid`: the field after the command, which is in parentheses, of /proc/<pid>/stat. */
function parentOf(pid: number): number | undefined {
  const stat = read(`/proc/${pid}/stat`);
  return stat === undefined ? undefined : Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/**
 * How often `pid` has gone to sleep. A shell waiting for its command sleeps until a signal it
 * catches wakes it: SIGINT, or SIGCHLD when the command is stopped or continued (Ctrl-Z, fg).
 */
const sleeps = (pid: number) =>
  /^voluntary_ctxt_switches:\s*(\d+)$/m.exec(read(`/proc/${pid}/status`) ?? '')?.[1];

/** Whether `pid` is the shell npm runs this script in (`sh -c '<script> <arguments>'`). */
function isNpmShell(pid: number): boolean {
  const script = process.env.npm_lifecycle_script;
  const [, flag, command] = read(`/proc/${pid}/cmdline`)?.split('\0') ?? [];
  return script !== undefined && flag === '-c' && command?.startsWith(script) === true;
}

/** Calls `stop` (perhaps more than once) when the stack should stop, npm killed included. */
export function onStopRequest(stop: () => void): void {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, stop);
  const parent = process.ppid;
  const shell = isNpmShell(parent) ? { npm: parentOf(parent), sleeps: sleeps(parent) } : undefined;
  // After a Ctrl-Z and fg the shell has woken for us: look again once we run again.
  let resumedAt = 0;
  let woken = false;
  process.on('SIGCONT', () => {
    resumedAt = Date.now();
  });
  setInterval(() => {
    if (process.ppid !== parent) return stop();
    if (shell === undefined) return;
    if (parentOf(parent) !== shell.npm) return stop();
    const now = sleeps(parent);
    if (now === shell.sleeps || Date.now() - resumedAt < 1000) {
      shell.sleeps = now;
      woken = false;
    } else if (woken) {
      stop();
    } else {
      // Once more, in case a SIGCONT is about to say why it woke.
      woken = true;
    }
  }, 250).unref();
}
