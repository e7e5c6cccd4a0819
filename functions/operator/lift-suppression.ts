/**
 * Lifting a suppression (docs/feedback.md): the next notification to that address is sent again.
 *
 * Input: the channel and the address's hash (no address is stored). Output: lifted, with who.
 * Steps: read the suppression; decide (only an active one is lifted); audited; one conditional write ACTIVE →
 * LIFTED, kept with who, when and why — a duplicate of the old report arriving later does not suppress it again.
 */

import type { SuppressionItem } from '../domain/audience.ts';
import type { Channel } from '../domain/channels.ts';
import { type OperatorAction, ok, refused } from './action.ts';

export interface LiftRequest {
  readonly channel: Channel;
  readonly addressHash: string;
}

export interface LiftOutcome {
  readonly lifted: true;
  readonly channel: Channel;
  readonly addressHash: string;
  /** The verified principal who lifted it. */
  readonly by: string;
}

/**
 * A suppression we lift is ours; a STOP is the carrier's and SNS's: SNS keeps the number on the account's opted-out
 * list and delivers nothing to it until the number is opted in again (SNS OptInPhoneNumber, "once every 30 days",
 * https://docs.aws.amazon.com/sns/latest/api/API_OptInPhoneNumber.html; docs/feedback.md). Said before it is lifted.
 */
export const CARRIER_STILL_BLOCKS =
  "The customer replied STOP to one of our texts: lifting this suppression does not lift that. SNS keeps the number on the account's opted-out list and delivers no text to it until the number is opted in again (SNS OptInPhoneNumber, at most once every 30 days per number) — do that only when the customer has asked to receive texts again (for instance by replying START); until then every text to it fails as opted out.";

const noneActive = (r: LiftRequest) =>
  refused('NOT_FOUND', `no active ${r.channel} suppression under ${r.addressHash}`);

export const liftSuppression: OperatorAction<LiftRequest, SuppressionItem | undefined, SuppressionItem, LiftOutcome> = {
  audit: 'SUPPRESSION_LIFT',
  target: (r) => `${r.channel}#${r.addressHash}`,
  kind: () => 'SUPPRESSION_LIFT',
  read: (ports, r) => ports.audience.suppression(r.channel, r.addressHash),
  decide: (item, r) => (item?.state === 'ACTIVE' ? ok(item) : noneActive(r)),
  shown: (item) => ({
    state: item.state,
    cause: item.cause,
    since: item.since,
    notificationId: item.notificationId,
    ...(item.cause === 'CARRIER_OPT_OUT' ? { stillBlocked: CARRIER_STILL_BLOCKS } : {}),
  }),

  async perform(ports, _item, r, actor) {
    const lifted = await ports.audience.lift(r.channel, r.addressHash, actor.identity, ports.now(), actor.reason);
    const by = actor.identity.principal;
    return lifted ? ok({ lifted: true, channel: r.channel, addressHash: r.addressHash, by }) : noneActive(r);
  },

  done: () => ({ state: 'LIFTED' }),
};
