/** `ops evidence`: the message as the provider received it — every field printed as stored, nothing re-rendered. */
import type { SendProof } from '../../../functions/operator/index.ts';

export function evidenceText(proofs: readonly SendProof[]): string {
  const out: string[] = [];
  for (const p of proofs) {
    const s = p.send;
    out.push(
      `${s.notificationId}  accepted ${s.acceptedAt} by ${s.request.api} as message ${s.providerMessageId} (attempt ${s.attempt})`,
      `  kept until ${s.retainUntil}; object ${p.key} sha256 ${p.sha256}`,
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
