/**
 * Exporting one customer's data (docs/evidence-and-privacy.md "One customer's data"): everything notifier holds
 * about them as one JSON document — every event (inbox item and notifications), the preferences, the suppressions of
 * their addresses, and every evidence record with its reports (from the customer's pointers, so also for sends the
 * table no longer holds).
 *
 * Input: the user id. Output: the document. Steps: read everything (the preview shows the customer view); audited —
 * the document carries personal data out of the system —; hand it over.
 */
import type { EventView, StoredItem } from '../stores/event-store.ts';
import { type OperatorAction, ok } from './action.ts';
import { suppressionsOf } from './customer.ts';
import { type SendProof, userEvidence } from './evidence.ts';
import type { OperatorPorts } from './ports.ts';

export interface CustomerExport {
  readonly userId: string;
  readonly exportedAt: string;
  readonly notifications: { eventId: string; inbox: StoredItem | null; notifications: StoredItem[] }[];
  readonly preferences: unknown;
  readonly suppressions: StoredItem[];
  readonly evidence: SendProof[];
}

async function readExport(ports: OperatorPorts, userId: string): Promise<CustomerExport> {
  const events: EventView[] = [];
  for (const eventId of await ports.events.eventIdsOfUser(userId)) events.push(await ports.events.read(eventId));
  return {
    userId,
    exportedAt: new Date(ports.now()).toISOString(),
    notifications: events.map((e) => ({ eventId: e.eventId, inbox: e.inbox ?? null, notifications: e.notifications })),
    preferences: (await ports.audience.preferences(userId)) ?? null,
    suppressions: await suppressionsOf(
      ports,
      events.flatMap((e) => e.notifications),
    ),
    evidence: await userEvidence(ports.evidence, userId, ports.evidenceLocator),
  };
}

export const exportCustomer: OperatorAction<
  { readonly userId: string },
  CustomerExport,
  CustomerExport,
  CustomerExport
> = {
  audit: 'EXPORT',
  target: (r) => r.userId,
  kind: () => 'EXPORT',
  customer: (_document, r) => r.userId,
  read: (ports, r) => readExport(ports, r.userId),
  decide: (document) => ok(document),
  shown: (document) => ({ events: document.notifications.length, evidence: document.evidence.length }),
  // The document's time differs on every read; what it holds is what an approval compares.
  fingerprint: ({ exportedAt: _at, ...held }) => held,
  perform: async (_ports, document) => ok(document),
  done: (document) => ({
    events: document.notifications.length,
    evidence: document.evidence.length,
  }),
};
