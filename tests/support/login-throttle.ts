/** A login throttle over a given store, on a clock the test moves, for the throttle's own tests. */
import type { AppError } from '../../lib/errors.ts';
import { createLogger } from '../../lib/log.ts';
import { createLoginThrottle } from '../../lib/throttle/login-throttle.ts';
import type {
  LoginAttempt,
  ThrottlePolicy,
  ThrottleSettings,
  ThrottleStore,
} from '../../lib/throttle/throttle.ts';
import { COUNTER_SECRET } from './keys.ts';
import { createMemoryMetrics } from './memory-metrics.ts';

/** 10:00 UTC: the start of an hour-long period and of a 30-second in-flight slot. */
export const T0 = Date.parse('2026-11-21T10:00:00Z');

/** A name's rule on every stage (docs/behaviour.md), in-flight limit as loginInflightLimit's default. */
export const NAME_POLICY: ThrottlePolicy = {
  limit: 5,
  windowSeconds: 86_400,
  baseLockSeconds: 30,
  maxLockSeconds: 900,
  inflightLimit: 50,
};
/** People's address rule (ipFailureLimit, ipFailureWindow), its in-flight limit its failure limit. */
export const ADDRESS_POLICY: ThrottlePolicy = {
  ...NAME_POLICY,
  limit: 100,
  windowSeconds: 3_600,
  inflightLimit: 100,
};
export const OFF: ThrottlePolicy = { ...NAME_POLICY, limit: 0 };

/** The name counted alone unless `settings` says otherwise: addresses off, known sources off. */
export function throttleOn(store: ThrottleStore, settings: Partial<ThrottleSettings> = {}, start = T0) {
  let now = start;
  const metrics = createMemoryMetrics();
  const lines: string[] = [];
  const throttle = createLoginThrottle({
    store,
    settings: {
      username: NAME_POLICY,
      sourceIp: OFF,
      clientSourceIp: OFF,
      knownSourceSeconds: 0,
      ...settings,
    },
    counterSecret: COUNTER_SECRET,
    clock: () => new Date(now),
    logger: createLogger('warn', (line) => lines.push(line)),
    metrics,
  });
  return {
    throttle,
    metrics,
    /** The throttle's log lines named `event`, as objects. */
    logged: (event: string) =>
      lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.event === event),
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
    /** One attempt that fails its password check; what is left of each quota. */
    fail: async (attempt: LoginAttempt) =>
      throttle.failed(attempt, 'bad password', await throttle.begin(attempt)),
    /** One attempt with the right password; what is left of each quota. */
    succeed: async (attempt: LoginAttempt) => throttle.succeeded(await throttle.begin(attempt)),
    /** 'granted' (the attempt given back at once), or the refusal's error. */
    refusal: async (attempt: LoginAttempt): Promise<'granted' | AppError> => {
      try {
        await throttle.undecided(await throttle.begin(attempt));
        return 'granted';
      } catch (error) {
        return error as AppError;
      }
    },
  };
}
