/**
 * The operator's view of suppressed addresses, as commands of the one ops CLI (tools/ops/cli.ts):
 * `suppressions`, `lift-suppression` and `suppression-hash`.
 *
 * No address is stored: a suppression is keyed by the sha-256 of the normalised address. To find who it was, read the
 * notification it names (its `recipient`), which is what an operator with table access can see anyway.
 */

import { addressHash, type SuppressionItem } from '../../functions/domain/audience.ts';
import { CHANNELS, type Channel } from '../../functions/domain/channels.ts';
import type { DynamoAudienceStore } from '../../functions/stores/audience-store.ts';
import { UsageError } from '../local/cli.ts';

export function parseChannel(value: string | undefined): Channel {
  const channel = String(value ?? 'EMAIL').toUpperCase() as Channel;
  if (!CHANNELS.includes(channel)) throw new UsageError(`--channel must be one of ${CHANNELS.join(', ')}`);
  return channel;
}

/** The key a suppression is stored under: from --address (hashed here, nothing read) or --hash. */
export function suppressionHashOf(channel: Channel, values: { address?: string; hash?: string }): string {
  if (values.address !== undefined && values.hash !== undefined) {
    throw new UsageError('give --address or --hash, not both');
  }
  if (values.address !== undefined) return addressHash(channel, values.address);
  if (values.hash !== undefined) {
    if (!/^[0-9a-f]{64}$/.test(values.hash)) throw new UsageError('--hash must be 64 lower-case hex characters');
    return values.hash;
  }
  throw new UsageError('name the address: --address ADDR or --hash HEX');
}

export interface SuppressionView extends Omit<SuppressionItem, 'pk' | 'sk'> {
  readonly addressHash: string;
}

export async function listSuppressions(
  store: DynamoAudienceStore,
  channel: Channel,
  all: boolean,
): Promise<SuppressionView[]> {
  return (await store.list(channel))
    .filter((i) => all || i.state === 'ACTIVE')
    .map(({ pk: _pk, sk, ...rest }) => ({ addressHash: sk, ...rest }));
}

export function suppressionsText(items: readonly SuppressionView[], channel: Channel, all: boolean): string {
  return [
    `${items.length} ${all ? '' : 'active '}${channel} suppression(s)`,
    ...items.map((i) => {
      const lifted = i.state === 'LIFTED' ? `  LIFTED ${i.liftedAt ?? ''} by ${i.liftedBy ?? '?'}` : '';
      return `  ${i.addressHash}  ${i.cause.padEnd(10)} since ${i.since}  from ${i.notificationId}${lifted}`;
    }),
  ].join('\n');
}

/** What the operator is told after a lift: for email, SES keeps its own account-level list. */
export function liftedText(channel: Channel, hash: string): string {
  return (
    `lifted ${channel} ${hash}: notifier sends to this address again` +
    (channel === 'EMAIL'
      ? ' — lift it from SES too (aws sesv2 delete-suppressed-destination --email-address …), or SES drops the next email as OnAccountSuppressionList and its bounce suppresses the address here again'
      : '')
  );
}
