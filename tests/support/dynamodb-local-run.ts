/**
 * vitest globalSetup of the integration project: one DynamoDB Local for the whole run, where
 * this machine has Java 17. Every suite that asks startTestDynamo for DynamoDB Local gets a
 * stage of its own in it (its tables dropped at its close; the extra stages a suite makes itself
 * stay until the run ends) instead of a Java process of its own: a start costs about 5 s of CPU,
 * and eight suites started one each.
 */
import type { TestProject } from 'vitest/node';
import { JAVA_MISSING_REASON, startDynamoDbLocal } from './dynamo.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's DynamoDB Local, when this globalSetup started one. */
    sharedDynamodbLocal?: string;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (JAVA_MISSING_REASON !== undefined) return undefined;
  const server = await startDynamoDbLocal();
  project.provide('sharedDynamodbLocal', server.endpoint);
  return () => server.close();
}
