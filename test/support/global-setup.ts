/** Starts one DynamoDB Local for the whole integration run; each test file creates its own table in it. */
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { type DynamoDbLocal, startDynamoDbLocal } from '../../tools/local/dynamodb-local.ts';

let db: DynamoDbLocal | undefined;

export async function setup(project: TestProject): Promise<void> {
  db = await startDynamoDbLocal();
  project.provide('dynamoEndpoint', db.endpoint);
}

export async function teardown(): Promise<void> {
  await db?.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
  }
}
