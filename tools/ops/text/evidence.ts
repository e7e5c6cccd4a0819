/** `ops evidence`: the message as the provider received it — every field printed as stored, nothing re-rendered. */
import type { SendProof, UnfoundSend } from '../../../functions/operator/index.ts';

/**
 * Nothing names a send of it: neither the table (its items may have expired) nor the evidence index (kept with the
 * evidence, by event and by customer). Sends recorded before the event index are found by their customer (`--user`).
 */
export function noEvidenceText(id: string, user: string | undefined): string {
  return `no evidence of ${id}: neither the table nor the evidence index names a send of it (not sent, its evidence past its retention, or sent before evidence was kept)${user === undefined ? '; a send indexed only by its customer (before the event index) is found with --user ID' : ''}`;
}

export function evidenceText(proofs: readonly SendProof[], unfound: readonly UnfoundSend[] = []): string {
  const out: string[] = unfound.map((u) => `${u.notificationId}  NOT SHOWN (${u.state}): ${u.says}`);
  if (out.length > 0) out.push('');
  for (const p of proofs) {
    const s = p.send;
    out.push(
      `${s.notificationId}  accepted ${s.acceptedAt} by ${s.request.api} as message ${s.providerMessageId} (attempt ${s.attempt})`,
      `  kept until ${s.retainUntil}; object ${p.key}${p.versionId === undefined ? '' : ` version ${p.versionId}`}${p.record === undefined ? '' : ` record ${p.record}`} sha256 ${p.sha256}`,
      ...(p.warnings ?? []).map((w) => `  WARNING: ${w}`),
      ...requestLines(s.request),
    );
    for (const f of p.feedback) {
      out.push(
        `  provider reported ${f.status} at ${f.at}${f.bounceType ? ` (${f.bounceType}/${f.bounceSubType ?? ''})` : ''}${f.providerResponse ? `: ${f.providerResponse}` : ''}`,
      );
    }
    out.push('');
  }
  return out.join('\n');
}

function requestLines(r: SendProof['send']['request']): string[] {
  switch (r.channel) {
    case 'EMAIL':
      return [
        `From: ${r.source}`,
        `To: ${r.to.join(', ')}`,
        `Subject: ${r.subject}`,
        `--- text/plain; charset=${r.charset} ---`,
        r.text,
        `--- text/html; charset=${r.charset} ---`,
        r.html,
        '--- end ---',
      ];
    case 'SMS':
      return [
        `To: ${r.phoneNumber}`,
        `Encoding: ${r.encoding}, ${r.segments} segment(s)`,
        '--- text ---',
        r.text,
        '--- end ---',
      ];
    case 'PUSH':
      return [
        `To: ${r.targetArn}`,
        `--- payload (MessageStructure ${r.messageStructure}) ---`,
        r.payload,
        '--- end ---',
      ];
    default:
      return r satisfies never;
  }
}
