/** The operator's ports on a test's DynamoDB Local table, with its own evidence folder (and audit log) per call. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { localEvidenceIndexTableName } from '../../functions/contracts/evidence-index-schema.ts';
import { localEvidenceSpoolTableName } from '../../functions/contracts/evidence-spool-schema.ts';
import { addressHash } from '../../functions/domain/audience.ts';
import { suppressionPk } from '../../functions/domain/keys.ts';
import {
  type Actor,
  apply,
  type IngestInvoker,
  type OperatorPorts,
  operatorPorts,
  resend,
  type VerifiedIdentity,
} from '../../functions/operator/index.ts';
import { FileEvidenceStore } from '../../functions/stores/evidence-store.ts';

export const noIngest: IngestInvoker = async () => {
  throw new Error('this test feeds nothing to ingest');
};

export function operatorOn(
  table: { readonly doc: DynamoDBDocumentClient; readonly tableName: string },
  options: { evidenceDir?: string; invokeIngest?: IngestInvoker; now?: () => number } = {},
): OperatorPorts {
  const dir = options.evidenceDir ?? mkdtempSync(join(tmpdir(), 'operator-'));
  return operatorPorts({
    doc: table.doc,
    tableName: table.tableName,
    evidenceIndexTableName: localEvidenceIndexTableName(table.tableName),
    evidenceSpoolTableName: localEvidenceSpoolTableName(table.tableName),
    evidence: new FileEvidenceStore(dir),
    invokeIngest: options.invokeIngest ?? noIngest,
    ...(options.now === undefined ? {} : { now: options.now }),
  });
}

/** Two operators as a local run verifies them (the login of the process): four eyes needs both. */
export const ALICE_ID: VerifiedIdentity = { principal: 'alice', verifiedBy: 'LOCAL_USER' };
export const BOB_ID: VerifiedIdentity = { principal: 'bob', verifiedBy: 'LOCAL_USER' };
export const ALICE: Actor = { identity: ALICE_ID, reason: 'customer called' };
export const BOB: Actor = { identity: BOB_ID, reason: 'checked the ticket' };

/** An operator's resend, applied (audited): the notification after it. */
export const resendNow = async (
  ports: OperatorPorts,
  request: Parameters<typeof resend.decide>[1],
  actor: Actor = ALICE,
) => (await apply(resend, ports, request, actor)).item;

/**
 * An active BOUNCED suppression of an email address, written as the feedback function writes one (its key from
 * functions/domain/keys.ts): what a lift acts on. Answers the lift's request.
 */
export async function putEmailSuppression(
  doc: DynamoDBDocumentClient,
  tableName: string,
  address: string,
  notificationId: string,
): Promise<{ channel: 'EMAIL'; addressHash: string }> {
  const hash = addressHash('EMAIL', address);
  await doc.send(
    new PutCommand({
      TableName: tableName,
      Item: {
        pk: suppressionPk('EMAIL', hash),
        sk: hash,
        kind: 'SUPPRESSION',
        channel: 'EMAIL',
        state: 'ACTIVE',
        cause: 'BOUNCED',
        since: '2026-12-01T00:00:00.000Z',
        notificationId,
      },
    }),
  );
  return { channel: 'EMAIL', addressHash: hash };
}
