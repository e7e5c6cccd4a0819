/**
 * DynamoDB adapter of the operators' proposals (docs/operations.md "Four eyes"): each proposal one item in the one
 * partition of proposals (domain/keys.ts), written once, decided once — a conditional write from PENDING, before its
 * expiry, by another identity than its proposer's, so two approvers racing cannot both apply it — and then given the
 * outcome of the action it applied. Items leave the table `keepDays` after their expiry (TTL); the audit keeps them.
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  type NativeAttributeValue,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { Proposal, ProposalState } from '../domain/approval.ts';
import type { VerifiedIdentity } from '../domain/identity.ts';
import { PROPOSALS_PK, proposalSk } from '../domain/keys.ts';
import { isConditionFailure } from './condition-failure.ts';

export interface ProposalFilter {
  /** Only proposals in this state as stored (PENDING includes those past their expiry: the caller tells them apart). */
  readonly state?: ProposalState;
  /** Only proposals about this customer. */
  readonly userId?: string;
}

export interface Decision {
  readonly state: 'APPROVED' | 'REJECTED';
  readonly by: VerifiedIdentity;
  readonly at: string;
  readonly reason: string;
}

export interface ProposalStore {
  /** Writes a new proposal; an id already used is an error (ids carry randomness: it does not happen). */
  create(proposal: Proposal): Promise<void>;
  get(id: string): Promise<Proposal | undefined>;
  /** Newest first. */
  list(filter: ProposalFilter): Promise<Proposal[]>;
  /**
   * PENDING → the decision, only while it is pending, unexpired at `now` and — to approve — not the proposer's own:
   * false when any of that no longer holds (another identity decided it first, or it expired meanwhile).
   */
  decide(id: string, decision: Decision, now: number): Promise<boolean>;
  /** What the approved action came to. */
  recordOutcome(id: string, outcome: NonNullable<Proposal['outcome']>): Promise<void>;
}

const key = (id: string) => ({ pk: PROPOSALS_PK, sk: proposalSk(id) });

export class DynamoProposalStore implements ProposalStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    /** How long a proposal stays in the table after its expiry. */
    private readonly keepDays: number,
  ) {}

  async create(proposal: Proposal): Promise<void> {
    const expiresAt = Math.floor(Date.parse(proposal.approveBy) / 1000) + this.keepDays * 86_400;
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...key(proposal.id), kind: 'PROPOSAL', ...proposal, expiresAt },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  async get(id: string): Promise<Proposal | undefined> {
    const r = await this.client.send(new GetCommand({ TableName: this.tableName, Key: key(id), ConsistentRead: true }));
    return r.Item === undefined ? undefined : proposalOf(r.Item);
  }

  async list(filter: ProposalFilter): Promise<Proposal[]> {
    const conditions: string[] = [];
    const values: Record<string, NativeAttributeValue> = { ':pk': PROPOSALS_PK };
    if (filter.state !== undefined) {
      conditions.push('#state = :state');
      values[':state'] = filter.state;
    }
    if (filter.userId !== undefined) {
      conditions.push('userId = :user');
      values[':user'] = filter.userId;
    }
    const proposals: Proposal[] = [];
    let start: Record<string, NativeAttributeValue> | undefined;
    do {
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk',
          ...(conditions.length === 0 ? {} : { FilterExpression: conditions.join(' AND ') }),
          ...(filter.state === undefined ? {} : { ExpressionAttributeNames: { '#state': 'state' } }),
          ExpressionAttributeValues: values,
          ScanIndexForward: false,
          ConsistentRead: true,
          ...(start === undefined ? {} : { ExclusiveStartKey: start }),
        }),
      );
      proposals.push(...(page.Items ?? []).map(proposalOf));
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
    return proposals;
  }

  async decide(id: string, decision: Decision, now: number): Promise<boolean> {
    // Four eyes in the write itself too: an approval by the proposer's own principal never lands.
    const notOwn =
      decision.state === 'APPROVED' ? ' AND NOT (proposedBy.principal = :by AND proposedBy.verifiedBy = :via)' : '';
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key(id),
          ConditionExpression: `#state = :pending AND approveBy > :now${notOwn}`,
          UpdateExpression: 'SET #state = :state, decidedBy = :decider, decidedAt = :at, decisionReason = :reason',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: {
            ':pending': 'PENDING',
            ':now': new Date(now).toISOString(),
            ':state': decision.state,
            ':decider': decision.by,
            ':at': decision.at,
            ':reason': decision.reason,
            ...(notOwn === '' ? {} : { ':by': decision.by.principal, ':via': decision.by.verifiedBy }),
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async recordOutcome(id: string, outcome: NonNullable<Proposal['outcome']>): Promise<void> {
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: key(id),
        ConditionExpression: 'attribute_exists(pk)',
        UpdateExpression: 'SET outcome = :outcome',
        ExpressionAttributeValues: { ':outcome': outcome },
      }),
    );
  }
}

/** The proposal an item holds, without the item's keys and TTL. */
function proposalOf(item: Record<string, unknown>): Proposal {
  const { pk: _pk, sk: _sk, kind: _kind, expiresAt: _ttl, ...proposal } = item;
  return proposal as unknown as Proposal;
}
