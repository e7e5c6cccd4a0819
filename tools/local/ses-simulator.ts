/**
 * The SES mailbox simulator, locally: an email SES accepted for success@, bounce@, complaint@, ooto@ or
 * suppressionlist@simulator.amazonses.com (with or without a +label) produces the feedback events SES would publish
 * through the configuration set, in the EventBridge shape the feedback function receives in AWS. Other addresses
 * produce none: locally nobody knows what their mailbox would have answered.
 * https://docs.aws.amazon.com/ses/latest/dg/send-an-email-from-console.html#send-email-simulator
 */
import { randomUUID } from 'node:crypto';

export const SIMULATOR_DOMAIN = 'simulator.amazonses.com';

export interface AcceptedEmail {
  readonly messageId: string;
  readonly to: string;
  readonly source: string;
  /** The SendEmail's message tags as given (values as sent: base64url for notificationId). */
  readonly tags: Record<string, string>;
  readonly configurationSet: string | undefined;
  readonly at: number;
}

type Scenario = 'success' | 'bounce' | 'complaint' | 'ooto' | 'suppressionlist';

/** The simulator scenario of an address, or undefined for any other address. */
export function simulatorScenario(address: string): Scenario | undefined {
  const m = /^([a-z]+)(?:\+[^@]*)?@simulator\.amazonses\.com$/i.exec(address.trim());
  const local = m?.[1]?.toLowerCase();
  return local === 'success' ||
    local === 'bounce' ||
    local === 'complaint' ||
    local === 'ooto' ||
    local === 'suppressionlist'
    ? local
    : undefined;
}

/** The EventBridge events SES would publish for one accepted email, in the order SES would. */
export function simulatorFeedback(email: AcceptedEmail, region = 'us-east-1'): Record<string, unknown>[] {
  const scenario = simulatorScenario(email.to);
  if (scenario === undefined || email.configurationSet === undefined) return [];
  const iso = (ms: number) => new Date(ms).toISOString();
  const mail = {
    timestamp: iso(email.at),
    source: email.source,
    sendingAccountId: '123456789012',
    messageId: email.messageId,
    destination: [email.to],
    headersTruncated: false,
    tags: {
      'ses:operation': ['SendEmail'],
      'ses:configuration-set': [email.configurationSet],
      ...Object.fromEntries(Object.entries(email.tags).map(([k, v]) => [k, [v]])),
    },
  };
  const event = (detailType: string, detail: Record<string, unknown>) => ({
    version: '0',
    id: randomUUID(),
    'detail-type': detailType,
    source: 'aws.ses',
    account: '123456789012',
    time: iso(email.at + 1000),
    region,
    resources: [`arn:aws:ses:${region}:123456789012:configuration-set/${email.configurationSet}`],
    detail: { ...detail, mail },
  });
  const delivery = event('Email Delivered', {
    eventType: 'Delivery',
    delivery: {
      timestamp: iso(email.at + 800),
      processingTimeMillis: 800,
      recipients: [email.to],
      smtpResponse: '250 2.6.0 Message received',
      reportingMTA: 'a8-70.smtp-out.amazonses.com',
    },
  });
  const bounce = (subType: string, status: string) =>
    event('Email Bounced', {
      eventType: 'Bounce',
      bounce: {
        bounceType: 'Permanent',
        bounceSubType: subType,
        bouncedRecipients: [
          { emailAddress: email.to, action: 'failed', status, diagnosticCode: `smtp; 550 ${status}` },
        ],
        timestamp: iso(email.at + 900),
        feedbackId: `${randomUUID()}-000000`,
        reportingMTA: 'dsn; a8-70.smtp-out.amazonses.com',
      },
    });
  switch (scenario) {
    case 'success':
    case 'ooto': // the auto-reply goes to the sender; SES reports a delivery
      return [delivery];
    case 'bounce':
      return [bounce('General', '5.1.1')];
    case 'suppressionlist':
      return [bounce('OnAccountSuppressionList', '5.1.1')];
    case 'complaint':
      return [
        delivery,
        event('Email Complaint Received', {
          eventType: 'Complaint',
          complaint: {
            complainedRecipients: [{ emailAddress: email.to }],
            timestamp: iso(email.at + 2000),
            feedbackId: `${randomUUID()}-000000`,
            complaintFeedbackType: 'abuse',
          },
        }),
      ];
  }
}
