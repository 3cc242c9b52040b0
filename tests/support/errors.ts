/** How a promise ended, as a test can compare it: 'resolved', an AppError code, or the error's text. */
import { AppError } from '../../lib/errors.ts';

export const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'resolved',
    (error: unknown) => (error instanceof AppError ? error.code : String(error)),
  );
