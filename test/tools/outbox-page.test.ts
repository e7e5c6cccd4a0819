import { describe, expect, it } from 'vitest';
import { outboxHtml } from '../../tools/local/outbox-page.ts';

describe("npm start's outbox page", () => {
  it('shows each outcome, and escapes what the provider received (third-party text)', () => {
    const html = outboxHtml(
      [
        {
          notificationId: 'e-1#EMAIL',
          channel: 'EMAIL',
          status: 'SENT',
          deliveryStatus: 'BOUNCED',
          reason: null,
          sent: 'Transfer to <script>alert(1)</script>',
        },
        {
          notificationId: 'e-2#SMS',
          channel: 'SMS',
          status: 'SUPPRESSED',
          deliveryStatus: null,
          reason: 'OPTED_OUT',
          sent: null,
        },
      ],
      'http://127.0.0.1:1',
    );
    expect(html).toContain('<code>e-1#EMAIL</code>');
    expect(html).toContain('>BOUNCED</td>');
    expect(html).toContain('>OPTED_OUT</td>');
    expect(html).toContain('not sent');
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;');
  });
});
