/** Translation of AWS SDK failures into the service's error vocabulary. */
import { AppError } from '../errors.ts';

export const isConditionalCheckFailure = (error: unknown) =>
  error instanceof Error && error.name === 'ConditionalCheckFailedException';

/**
 * Runs one DynamoDB call. Any SDK failure (throttling, timeout, network, a missing table)
 * becomes DEPENDENCY_UNAVAILABLE, answered as 503: the caller may retry and is never told
 * more. A failed condition is returned to the caller, which knows what it means.
 */
export async function dynamo<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isConditionalCheckFailure(error)) throw error;
    throw new AppError('DEPENDENCY_UNAVAILABLE', { cause: error });
  }
}

/** Runs one conditional DynamoDB write; resolves undefined when its condition failed. */
export async function conditional<T>(call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await dynamo(call);
  } catch (error) {
    if (isConditionalCheckFailure(error)) return undefined;
    throw error;
  }
}
