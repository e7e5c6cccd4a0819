/**
 * SES feedback events as EventBridge delivers them (source aws.ses, the SES event record as `detail`), built on the
 * records of the AWS documentation's examples ("Examples of event data that Amazon SES publishes to Amazon SNS":
 * Bounce, Complaint, Delivery, Reject, DeliveryDelay), with the tags our configuration set carries.
 */
import { tagValue } from '../../functions/dispatch/senders.ts';

export type SesEventType = 'Delivery' | 'Bounce' | 'Complaint' | 'Reject' | 'DeliveryDelay';

export const DETAIL_TYPES: Record<SesEventType, string> = {
  Delivery: 'Email Delivered',
  Bounce: 'Email Bounced',
  Complaint: 'Email Complaint Received',
  Reject: 'Email Rejected',
  DeliveryDelay: 'Email Delivery Delayed',
};

export interface SesEventOptions {
  notificationId?: string | undefined;
  messageId?: string;
  to?: string;
  /** When the event happened (the type's own timestamp). */
  at?: string;
  bounceType?: 'Permanent' | 'Transient' | 'Undetermined';
  bounceSubType?: string;
  configurationSet?: string;
}

function mail(o: SesEventOptions) {
  const tags: Record<string, string[]> = {
    'ses:operation': ['SendEmail'],
    'ses:configuration-set': [o.configurationSet ?? 'notifier-local'],
    'ses:source-ip': ['192.0.2.0'],
    'ses:from-domain': ['bank.example'],
    'ses:caller-identity': ['notifier-dispatch'],
    template: ['TransferCompleted'],
  };
  if (o.notificationId !== undefined) tags.notificationId = [tagValue(o.notificationId)];
  return {
    timestamp: '2026-11-30T09:15:01.000Z',
    source: '"Example Bank" <notifications@bank.example>',
    sourceArn: 'arn:aws:ses:us-east-1:123456789012:identity/bank.example',
    sendingAccountId: '123456789012',
    messageId: o.messageId ?? 'EXAMPLE7c191be45-e9aedb9a-02f9-4d12-a87d-dd0099a07f8a-000000',
    destination: [o.to ?? 'recipient@example.com'],
    headersTruncated: false,
    headers: [{ name: 'From', value: '"Example Bank" <notifications@bank.example>' }],
    commonHeaders: { from: ['"Example Bank" <notifications@bank.example>'], to: [o.to ?? 'recipient@example.com'] },
    tags,
  };
}

export function sesRecord(type: SesEventType, o: SesEventOptions = {}): Record<string, unknown> {
  const to = o.to ?? 'recipient@example.com';
  const at = o.at ?? '2026-11-30T09:15:03.000Z';
  switch (type) {
    case 'Delivery':
      return {
        eventType: 'Delivery',
        mail: mail(o),
        delivery: {
          timestamp: at,
          processingTimeMillis: 1179,
          recipients: [to],
          smtpResponse: '250 2.6.0 Message received',
          reportingMTA: 'mta.example.com',
        },
      };
    case 'Bounce':
      return {
        eventType: 'Bounce',
        bounce: {
          bounceType: o.bounceType ?? 'Permanent',
          bounceSubType: o.bounceSubType ?? 'General',
          bouncedRecipients: [
            { emailAddress: to, action: 'failed', status: '5.1.1', diagnosticCode: 'smtp; 550 5.1.1 user unknown' },
          ],
          timestamp: at,
          feedbackId: '0100015e3dc3f1e5-example-000000',
          reportingMTA: 'dsn; mta.example.com',
        },
        mail: mail(o),
      };
    case 'Complaint':
      return {
        eventType: 'Complaint',
        complaint: {
          complainedRecipients: [{ emailAddress: to }],
          timestamp: at,
          feedbackId: '0100015e3dc4a8c1-example-000000',
          userAgent: 'Mozilla/5.0',
          complaintFeedbackType: 'abuse',
          arrivalDate: at,
        },
        mail: mail(o),
      };
    case 'Reject':
      return { eventType: 'Reject', mail: mail(o), reject: { reason: 'Bad content' } };
    case 'DeliveryDelay':
      return {
        eventType: 'DeliveryDelay',
        mail: mail(o),
        deliveryDelay: {
          timestamp: at,
          delayType: 'TransientCommunicationFailure',
          expirationTime: '2026-11-30T23:15:01.000Z',
          delayedRecipients: [
            { emailAddress: to, status: '4.4.1', diagnosticCode: 'smtp; 421 4.4.1 Unable to connect' },
          ],
        },
      };
  }
}

/** The EventBridge event around an SES record. */
export function sesEvent(type: SesEventType, o: SesEventOptions = {}): Record<string, unknown> {
  return {
    version: '0',
    id: crypto.randomUUID(),
    'detail-type': DETAIL_TYPES[type],
    source: 'aws.ses',
    account: '123456789012',
    time: o.at ?? '2026-11-30T09:15:03Z',
    region: 'us-east-1',
    resources: [`arn:aws:ses:us-east-1:123456789012:configuration-set/${o.configurationSet ?? 'notifier-local'}`],
    detail: sesRecord(type, o),
  };
}
