/**
 * A document client on DynamoDB Local that records every write it sends, and the attributes each write names — what
 * IAM's `dynamodb:Attributes` condition compares with a grant's list (the key's, the names in the expressions, and the
 * bare names written in them), so a test can hold a code path to the attributes its grant allows.
 */
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { localClient } from '../../tools/local/dynamodb-local.ts';

export interface RecordedWrite {
  readonly command: string;
  readonly input: Record<string, unknown>;
}

const WRITES = /^(Put|Update|Delete|BatchWrite|TransactWrite)/;

export function recordingClient(endpoint: string): { doc: DynamoDBDocumentClient; writes: RecordedWrite[] } {
  const doc = DynamoDBDocumentClient.from(localClient(endpoint), { marshallOptions: { removeUndefinedValues: true } });
  const writes: RecordedWrite[] = [];
  doc.middlewareStack.add(
    (next, context) => async (args) => {
      const command = String(context.commandName ?? '');
      if (WRITES.test(command)) writes.push({ command, input: args.input as Record<string, unknown> });
      return next(args);
    },
    { step: 'initialize', name: 'recordWrites' },
  );
  return { doc, writes };
}

/** Expression words that are not attribute names. */
const GRAMMAR = new Set(['SET', 'REMOVE', 'ADD', 'DELETE', 'AND', 'OR', 'NOT', 'BETWEEN', 'IN', 'size']);

/** Every attribute a write names: its key's, its #names' values, and the bare names in its expressions. */
export function attributesNamed(input: Record<string, unknown>): string[] {
  const names = new Set(Object.keys((input.Key ?? {}) as object));
  for (const n of Object.values((input.ExpressionAttributeNames ?? {}) as Record<string, string>)) names.add(n);
  for (const field of ['ConditionExpression', 'UpdateExpression']) {
    const text = String(input[field] ?? '').replace(/[#:][A-Za-z0-9_]+/g, ' ');
    // A word followed by "(" is a function (attribute_not_exists, begins_with), not a name.
    for (const [, word, call] of text.matchAll(/([A-Za-z_][A-Za-z0-9_]*)(\s*\()?/g)) {
      if (call === undefined && word !== undefined && !GRAMMAR.has(word)) names.add(word);
    }
  }
  return [...names];
}
