/**
 * Ingest's look-up in the other region (docs/regions.md "Events read again"): after the old region is reconciled, an
 * event with no inbox item here is asked of the old region's replica — the global table's, of the same name there.
 * It runs exactly when that region may be down, so it never waits long and never retries: one attempt per request,
 * a short timeout (`PEER_LOOKUP_TIMEOUT_MS`), and after a failure the look-ups pause for a while in this container,
 * so a batch behind a dead region holds its events at once instead of each waiting out the timeout. Whatever fails —
 * the connection, the timeout, the pause, or the old region no longer FENCED — throws: the store holds the event.
 *
 * "Absent there" proves "never taken" only while the old region is fenced and quiet, so each look-up first reads the
 * old region's CONTROL (consistent): FENCED, or no answer. A predecessor promoted again since is ACTIVE: held.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { traced } from '../commons/powertools.ts';
import type { FenceControl } from '../domain/fence.ts';
import { DynamoFenceStore } from '../stores/fence-store.ts';
import type { InboxStore, KnownEvents } from './inbox-port.ts';
import { DynamoInboxStore } from './inbox-store.ts';
import { OtherRegionActive, PeerLookupUnanswered } from './peer-errors.ts';

/** After a look-up fails, how long this container holds events without asking again. */
export const PEER_LOOKUP_PAUSE_MS = 15_000;

export { OtherRegionActive, PeerLookupUnanswered } from './peer-errors.ts';

export interface PeerRegion {
  readonly region: string;
  /** The other region's replica of the table: the global table's name, the same in both regions. */
  readonly tableName: string;
  readonly fenceTable: string;
  readonly timeoutMs: number;
}

export class PeerInboxes {
  /** Until when this container does not ask, and whether the failure that paused it was the other region ACTIVE. */
  private paused = { until: Number.NEGATIVE_INFINITY, otherActive: false };

  constructor(
    private readonly inbox: Required<Pick<InboxStore, 'findTaken'>>,
    private readonly fence: { control(consistent: boolean): Promise<FenceControl | undefined> },
    private readonly now: () => number,
    private readonly pauseMs = PEER_LOOKUP_PAUSE_MS,
  ) {}

  /** The old region's inbox items of these events (`INBOX` or held, any epoch); throws when it cannot tell. */
  async taken(eventIds: readonly string[]): Promise<KnownEvents> {
    const at = this.now();
    if (at < this.paused.until) {
      // The same answer as the failure that paused it: an ACTIVE region stays a reason not to take a copy of its record.
      const why = 'a look-up in the other region failed a moment ago: not asked again yet';
      throw this.paused.otherActive ? new OtherRegionActive(why) : new PeerLookupUnanswered(why);
    }
    try {
      const control = await this.fence.control(true);
      if (control?.state === 'ACTIVE')
        throw new OtherRegionActive(`the other region is ACTIVE at epoch ${control.epoch}`);
      if (control?.state !== 'FENCED') throw new PeerLookupUnanswered("the other region's fence says nothing");
      return await this.inbox.findTaken(eventIds);
    } catch (error) {
      this.paused = { until: at + this.pauseMs, otherActive: error instanceof OtherRegionActive };
      throw error;
    }
  }
}

/**
 * The deployed look-up: a client for the other region, one attempt, the timeout on both the connection and the
 * request. `endpoint` only for tests and the local run (the SDK also reads AWS_ENDPOINT_URL_DYNAMODB).
 */
export function peerInboxes(peer: PeerRegion, now: () => number = Date.now, endpoint?: string): PeerInboxes {
  const client = DynamoDBDocumentClient.from(
    traced(
      new DynamoDBClient({
        region: peer.region,
        maxAttempts: 1,
        // Without throwOnRequestTimeout the SDK only logs a request that outlives requestTimeout, and waits on.
        requestHandler: {
          requestTimeout: peer.timeoutMs,
          throwOnRequestTimeout: true,
          connectionTimeout: peer.timeoutMs,
        },
        ...(endpoint === undefined ? {} : { endpoint }),
      }),
    ),
  );
  return new PeerInboxes(
    new DynamoInboxStore(client, peer.tableName),
    new DynamoFenceStore(client, peer.fenceTable, 1, now),
    now,
  );
}
