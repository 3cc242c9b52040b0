/** How a promise ended, as a test can compare it. */
import { AppError } from '../../lib/errors.ts';

/** 'resolved', an AppError code, or the error's text. */
export const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'resolved',
    (error: unknown) => (error instanceof AppError ? error.code : String(error)),
  );

/** The rejection of `promise`; fails the test if it resolved. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  const outcome = await promise.then(
    () => ({ resolved: true as const }),
    (error: unknown) => ({ resolved: false as const, error }),
  );
  if (outcome.resolved) throw new Error('expected a rejection');
  return outcome.error;
}
