/**
 * The ingest function as the operator's replays and repairs reach it: invoked and waited for, with the MSK event
 * shaped as the mapping delivers it (functions/operator/msk-event.ts). A function error is an error here.
 */
import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import type { IngestInvoker } from '../operator/index.ts';

export function lambdaIngest(lambda: LambdaClient, functionName: string): IngestInvoker {
  return async (event) => {
    const answer = await lambda.send(
      new InvokeCommand({
        FunctionName: functionName,
        InvocationType: 'RequestResponse',
        Payload: Buffer.from(JSON.stringify(event)),
      }),
    );
    if (answer.FunctionError !== undefined) {
      const payload = answer.Payload === undefined ? '' : Buffer.from(answer.Payload).toString('utf8');
      throw new Error(`ingest ${functionName} failed (${answer.FunctionError}): ${payload.slice(0, 300)}`);
    }
  };
}
