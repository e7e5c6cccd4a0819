/** `npm run ops -- --help`: every command, every option, the exit codes (docs/operations.md "The operator CLI"). */
export const USAGE = `
Usage: npm run ops -- <command> [arguments] (--stage S | --stack NAME | --endpoint URL [--table NAME]) [--json]

Where notifier runs
  --stage S, --stack NAME   a deployed stack: every name comes from its outputs (region: AWS_REGION or the profile)
  --endpoint URL            the local run's DynamoDB Local (npm start -- --keep prints it); --table: notifier-local

Commands
  inspect <eventId>                  the inbox item and each notification: status, attempt, provider message id,
                                     last error, manual resends
  trace <eventId> [--since 24h]      every log line about the event across the three functions (Logs Insights,
                                     run for you); locally, the log file of the run on that endpoint
  quarantine [--since 24h] [--reason R]
                                     quarantined records, newest first, with reason and detail and their id
  replay-quarantine <id>... --reason TEXT [--value-file FILE] --confirm
                                     feeds records back through ingest at their own offset: the stored value, or the
                                     producer's corrected event from FILE (one id; it must keep the record's eventId,
                                     and what it changes is shown first). Already processed: a duplicate. Audited.
  replay-failed-batches [--since 24h] --reason TEXT --confirm
                                     replays the batches the MSK mapping parked in S3 (FailedIngestBatchesBucketName)
  refused [--since 24h] [--reason R]
                                     notifications refused for a contact point without a sendable reading
                                     (INVALID_CONTACT, UNSENDABLE_ADDRESS, MISSING_CONTACT), newest first
  repair <eventId> --value-file FILE --reason TEXT --confirm
                                     feeds the producer's corrected event through ingest: the same event apart from
                                     the refused channels' contact points moves them REFUSED → PENDING (sent once);
                                     anything else is a conflict, quarantined. A resend on the topic does the same.
  resend <eventId#CHANNEL> --reason TEXT [--despite-accepted MESSAGE_ID] --confirm
                                     one deliberate resend of a FAILED or UNKNOWN notification, recorded on the item
                                     (who, when, why); refused for anything in flight, and for a notification the
                                     provider is known to have accepted (SENT, or its message id recorded) unless
                                     --despite-accepted names that message id. Without --confirm it shows what it
                                     would do, with the message id. Audited.
  evidence <eventId | eventId#CHANNEL> [--user ID]
                                     what the customer received, byte for byte as the provider got it, when, and
                                     what the provider reported — from the evidence store, found through the event's
                                     notifications and the evidence index (by event, kept with the evidence: also
                                     after the table's items expired); a send named but not yet in the store says
                                     so (a gap, pending recovery, or lost); --user adds a customer's index (sends
                                     from before the event index) (locally: the run's own folder, found by
                                     --endpoint, or --evidence-dir DIR, read whole when DynamoDB Local is gone)
  customer <userId>                  each notice of the customer with what was sent or exactly why not (opted out,
                                     a suppressed address and the report behind it, a refused contact point, too old)
  export --user ID --reason TEXT --confirm
                                     everything notifier holds about the customer as one JSON document (notifications,
                                     evidence, preferences, suppressions). Audited.
  erase --user ID --reason TEXT --confirm
                                     removes the customer's personal data from the table (nothing still to be sent;
                                     evidence under retention stays: docs/evidence-and-privacy.md). Audited.
  audit [--since 30d]                every audited operator action: who, when, why, what
  suppressions [--channel C] [--all] active suppressions of a channel (EMAIL, PUSH or SMS; default EMAIL) by address
                                     hash, cause, since and the notification behind it; --all: lifted ones too
  lift-suppression (--address ADDR | --hash HEX) [--channel C] --reason TEXT --confirm
                                     lifts one: the next notification to that address is sent again. Recorded on the
                                     item (who, when, why); without --confirm it shows what it would lift. Audited.
  propose <action command with its arguments> --reason TEXT
                                     asks for an action another identity must approve (four eyes: by default repair,
                                     a replay with an edited value, lift-suppression, erase). Audited.
  proposals [--status PENDING|EXPIRED|APPROVED|REJECTED]
                                     proposals and who made them, why, what they would do, until when
  approve <proposalId> --reason TEXT [--confirm]
                                     shows what the proposal would do now; with --confirm applies exactly that (refused
                                     for your own proposal, an expired one, or when the state changed). Audited.
  reject <proposalId> --reason TEXT  closes a proposal (the proposer may withdraw their own). Audited.
  held [--channel C] [--after MARK]  the notices a failover held in this region (FAILOVER_HELD, and UNKNOWN ones in
                                     flight at the failover) waiting for the old region's record: event, channel,
                                     customer, the contact point masked, since when and why; 50 a page
  release-held <eventId#CHANNEL#E<n>> --reason TEXT --confirm
                                     sends a held notice now, late. The old region may have sent it: on an
                                     at-most-once channel the customer may get it twice, and that is your decision
                                     (the preview says so). Refused when the old region's record shows it sent. Audited.
  settle-held <eventId#CHANNEL#E<n>> --reason TEXT [--sent-before PROOF] --confirm
                                     closes a held notice without sending: HANDED_OVER with the old region's record or
                                     PROOF of its send (a message id, an evidence object), else FAILED (HELD_SETTLED):
                                     tell the customer (docs/regions.md). Audited.
  spool-keys <userId>                where the customer's records are in the evidence spool's table (from the index),
                                     as the commands a court-ordered erasure's break-glass session runs to delete them
                                     (docs/operations.md "Break glass"); reads only
  promote --to R --old-region-unreachable --from-epoch N [--cut ISO] --reason TEXT --confirm
                                     a failover: R's fence ACTIVE at an epoch above N and every one its replica has
                                     seen (the preview's lastSeenEpochs), its intake on, then a held or unknown
                                     successor for each unfinished notice, in runs it repeats until done. Audited.
  demote --region R --reason TEXT --confirm
                                     R's intake off, its fence FENCED (no send starts there), then quiescence. Audited.
  reconcile --from R --reason TEXT --confirm
                                     reads the demoted region R's records in the active one and releases, hands over or
                                     marks unknown each held notice (docs/regions.md "Runbook"). Audited.
                                     (npm run ops -- promote --help: each with its options)
  Every action is recorded with the identity that verified you: on a stage, your AWS principal as the operator API
  checked your signed request; locally, the login of this process. No flag names who acts.
  suppression-hash --address ADDR [--channel C]
                                     the key an address is suppressed under (nothing is read, no stack needed)

  --since D      30m, 24h, 7d, or an ISO 8601 time       --json   standard output is exactly one JSON document
  --fingerprint F  with --confirm or propose: the fingerprint the preview printed; refused (CHANGED) if what the
                 action acts on is no longer what that preview showed
  -h, --help     this text

Exit codes: 0 done; 1 failed (AWS refused a call, a replay failed); 2 usage; 3 refused or not found (a SENT
notification, an unknown id, resend without --confirm).
`;
