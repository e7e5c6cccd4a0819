/** The notices a failover held, as text: the listing, what a release or a settlement would do, and what it did. */
import type { HeldListing, HeldOutcome } from '../../../functions/operator/index.ts';

export function heldText(listing: HeldListing): string {
  const lines =
    listing.held.length === 0
      ? ['no held notice on this page']
      : listing.held.map(
          (h) =>
            `${h.notificationId}  ${h.status}  ${h.heldReason}  since ${h.since}  customer ${h.userId ?? '-'}  to ${h.recipient}  (carries ${h.supersedes})`,
        );
  const more =
    listing.next === undefined ? [] : [`more: npm run ops -- held --after ${listing.next} (the same options)`];
  return [...lines, ...more].join('\n');
}

/** A release's or a settlement's preview, from what the action shows (functions/operator/held.ts). */
export function heldPreviewText(action: 'RELEASE_HELD' | 'SETTLE_HELD', target: string, s: Record<string, unknown>) {
  const why = s.heldReason === null ? '' : ` (${String(s.heldReason)})`;
  // A stage in two regions: whether the old region answered (it refuses USE_RECONCILE while it answers, unreconciled).
  const old = typeof s.oldRegion === 'string' ? ` The old region: ${s.oldRegion}.` : '';
  const head = `${target} is ${String(s.fromStatus)}${why}: ${String(s.original)}.${old}`;
  if (action === 'RELEASE_HELD') {
    return `${head}\n${String(s.risk)}\nReleasing it sends it now, late (${String(s.channel)}, ${String(s.deliveryPolicy)}).`;
  }
  const proof = s.proof === undefined ? '' : ` (${String(s.proof)})`;
  return `${head}\nSettling it closes it without sending: ${String(s.to)}${proof}.\nThe customer: ${String(s.customer)}.`;
}

export const heldDoneText = (o: HeldOutcome, verb: 'released' | 'settled', by: string) =>
  `${o.notificationId}: ${o.fromStatus} → ${o.status}, ${verb} (by ${by})${verb === 'released' ? '; dispatch sends it through the stream trigger, late.' : '.'}`;
