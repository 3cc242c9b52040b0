/**
 * How long one attempt of an AWS call may take. `throwOnRequestTimeout` makes the request
 * bound a failure: without it the SDK's Node.js handler only logs a warning when a request
 * runs over and keeps waiting, so a DynamoDB or SSM that accepts a connection and never
 * answers would hold the request until the Lambda timed out (and API Gateway answered 504
 * instead of our 503).
 */

/**
 * On AWS: a second to connect, a second for the request and its response (DynamoDB answers
 * in milliseconds). With the SDK's three attempts and its backoff, a call that cannot
 * succeed fails within about 3.5 seconds: inside the authorizer's 5-second timeout and the
 * other functions' 10.
 */
export const AWS_REQUESTS = {
  connectionTimeout: 1000,
  requestTimeout: 1000,
  throwOnRequestTimeout: true,
} as const;

/**
 * On the local stage: the embedded DynamoDB shares a laptop's or a CI runner's CPU with the
 * functions, the tests and everything else, and under load answers hundreds of milliseconds
 * late with nothing wrong. Three seconds an attempt still ends a hang, within the login's
 * 10-second timeout.
 */
export const LOCAL_REQUESTS = {
  connectionTimeout: 3000,
  requestTimeout: 3000,
  throwOnRequestTimeout: true,
} as const;

/** Attempts of one call, the first included: the SDK's standard retry mode. */
export const MAX_ATTEMPTS = 3;
