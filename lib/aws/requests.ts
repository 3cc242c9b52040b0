/**
 * How long one attempt of an AWS call may take on AWS: a call that cannot succeed fails
 * within about 3.5 s (three attempts with backoff), inside the authorizer's 5-second timeout.
 * `throwOnRequestTimeout`: without it the SDK only logs an overrun and keeps waiting, until
 * the Lambda times out (a 504 instead of our 503).
 */
export const AWS_REQUESTS = {
  connectionTimeout: 1000,
  requestTimeout: 1000,
  throwOnRequestTimeout: true,
} as const;

/**
 * On the local stage: the embedded DynamoDB shares the machine's CPU and under load answers
 * hundreds of milliseconds late; three seconds still ends a hang within the login's timeout.
 */
export const LOCAL_REQUESTS = {
  connectionTimeout: 3000,
  requestTimeout: 3000,
  throwOnRequestTimeout: true,
} as const;

/** Attempts of one call, the first included: the SDK's standard retry mode. */
export const MAX_ATTEMPTS = 3;
