/**
 * The local outbox page of `npm start`: every notification of the run with its status, and what the customer got
 * from each send — the email as rendered HTML (in a sandboxed frame: no script, no network), the push as a
 * notification card, the SMS as a bubble with its encoding and segment count. Read from the table (statuses) and the
 * providers' ledgers (what SES and SNS actually accepted), at each page load.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { escape as html } from 'html-escaper';
import { type Channel, unknownChannel } from '../../functions/domain/channels.ts';
import { displayName } from '../../functions/domain/mailbox-name.ts';
import { messageIdOf } from '../../functions/domain/message-id.ts';
import { smsSize } from '../../functions/domain/sms.ts';
import { BoundedList } from './outcomes.ts';
import type { AcceptedSend } from './providers.ts';

export interface OutboxNotification {
  readonly notificationId: string;
  readonly eventId: string;
  readonly channel: Channel;
  readonly status: string;
  readonly recipient?: string;
  readonly attempt?: number;
  readonly lastError?: string;
  readonly providerMessageId?: string;
  /** An email's message id (functions/domain/message-id.ts). */
  readonly sesMessageId?: string;
  /** What the provider reported after accepting it (DELIVERED, BOUNCED, FAILED …), from the feedback function. */
  readonly deliveryStatus?: string;
  /** SMS and push: the carrier's or platform's answer with it. */
  readonly deliveryResponse?: string;
  /** Why it was not sent: SUPPRESSED's cause (BOUNCED, COMPLAINED, OPTED_OUT). */
  readonly suppressedReason?: string;
}

export interface OutboxSources {
  /** Every notification, a page at a time: a big run's table is never held whole. */
  notificationPages(): AsyncIterable<OutboxNotification[]>;
  sends(): readonly AcceptedSend[];
  /** More pages by path (the outcomes table at /outcomes). */
  readonly pages?: Readonly<Record<string, () => string>>;
}

/** Notifications shown on one page: a big run's page stays light; the JSON at /outbox.json has them all. */
export const PAGE_LIMIT = 300;
/**
 * Sends a run keeps in full per provider (text, HTML): enough to read every message of any example file, while a
 * 50 MB file's run keeps its memory flat. Beyond it the run counts them, and a notification shows its message id.
 */
export const SENDS_IN_FULL = 1000;

export interface OutboxEntry {
  readonly notification: OutboxNotification;
  readonly sends: AcceptedSend[];
}

/** Pairs each notification with the sends the providers accepted for it (SMS by providerMessageId). */
export function outboxEntries(notifications: OutboxNotification[], sends: readonly AcceptedSend[]): OutboxEntry[] {
  const byId = new Map<string, AcceptedSend[]>();
  const byMessageId = new Map(sends.map((s) => [s.messageId, s]));
  for (const s of sends) {
    if (s.notificationId === undefined) continue;
    byId.set(s.notificationId, [...(byId.get(s.notificationId) ?? []), s]);
  }
  return [...notifications]
    .sort((a, b) => a.notificationId.localeCompare(b.notificationId))
    .map((n) => {
      const own = byId.get(n.notificationId) ?? [];
      const bySms = n.providerMessageId === undefined ? undefined : byMessageId.get(n.providerMessageId);
      return { notification: n, sends: bySms !== undefined && !own.includes(bySms) ? [...own, bySms] : own };
    });
}

const STATUS_COLOUR: Record<string, string> = {
  SENT: '#1a7f37',
  FAILED: '#cf222e',
  UNKNOWN: '#9a6700',
  PENDING: '#57606a',
  SENDING: '#0969da',
  SUPPRESSED: '#9a6700',
};

/** Who reports on a send after accepting it. */
const REPORTER: Readonly<Record<Channel, string>> = { EMAIL: 'SES', PUSH: 'SNS', SMS: 'SNS' };

function sendView(channel: Channel, s: AcceptedSend): string {
  switch (channel) {
    case 'EMAIL':
      return emailView(s);
    case 'PUSH':
      return `<div class="push" data-channel="PUSH"><div class="card"><div class="title">${html(s.subject ?? '')}</div><div class="body">${html(s.text)}</div></div><div class="to">to ${html(s.to)}</div></div>`;
    case 'SMS':
      return smsView(s);
    default:
      return unknownChannel(channel);
  }
}

function emailView(s: AcceptedSend): string {
  return `<div class="email" data-channel="EMAIL">
  <div class="meta"><b>From</b> ${html(displayName(s.from ?? ''))} ${html(/<[^>]*>$/.exec(s.from ?? '')?.[0] ?? '')}<br><b>To</b> ${html(s.to)}<br><b>Subject</b> <span class="subject">${html(s.subject ?? '')}</span></div>
  <iframe sandbox="" title="${html(s.subject ?? 'email')}" srcdoc="${html(s.html ?? `<pre>${html(s.text)}</pre>`)}"></iframe>
</div>`;
}

function smsView(s: AcceptedSend): string {
  const size = smsSize(s.text);
  return `<div class="sms" data-channel="SMS"><div class="bubble">${html(s.text)}</div><div class="size">${size.encoding} · ${size.units} ${size.encoding === 'GSM-7' ? 'septets' : 'UTF-16 units'} · ${size.segments} segment${size.segments === 1 ? '' : 's'}</div><div class="to">to ${html(s.to)}</div></div>`;
}

/** The page: the notifications in `shown` (at most PAGE_LIMIT), under the counts of all `total` of them by status. */
export function outboxPage(shown: OutboxEntry[], counts: Readonly<Record<string, number>>, total: number): string {
  const rows = shown.map(({ notification: n, sends }) => {
    const colour = STATUS_COLOUR[n.status] ?? '#57606a';
    return `<section class="notification" id="${html(n.notificationId)}" data-status="${html(n.status)}">
  <h2><span class="channel">${html(n.channel)}</span> ${html(n.notificationId)} <span class="status" style="background:${colour}">${html(n.status)}</span></h2>
  <p class="facts">attempt ${n.attempt ?? 0}${n.deliveryStatus ? ` · ${REPORTER[n.channel]} reported <b class="delivery">${html(n.deliveryStatus)}</b>${n.deliveryResponse ? ` (<i class="response">${html(n.deliveryResponse)}</i>)` : ''}` : ''}${n.suppressedReason ? ` · not sent: <b class="suppressed">${html(n.suppressedReason)}</b>` : ''}${n.lastError ? ` · last error <code>${html(n.lastError)}</code>` : ''}${sends.length > 1 ? ` · <b>${sends.length} sends</b>` : ''}</p>
  ${sends.length > 0 ? sends.map((s) => sendView(n.channel, s)).join('\n') : messageIdOf(n) !== undefined ? `<p class="not-kept">accepted by the provider as message <code>${html(messageIdOf(n) ?? '')}</code>; its content is not kept (a run keeps the first ${SENDS_IN_FULL} sends of each provider)</p>` : '<p class="nothing">nothing was accepted by the provider for this notification</p>'}
</section>`;
  });
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>notifier outbox</title>
<style>
body{font:14px system-ui,sans-serif;margin:24px;background:#f6f8fa;color:#1f2328}
.notification{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:12px 16px;margin:12px 0}
h2{font-size:15px;margin:0 0 4px}.channel{font-family:monospace;color:#57606a}
.status{color:#fff;border-radius:10px;padding:1px 8px;font-size:12px;margin-left:6px}
.facts{color:#57606a;margin:0 0 8px}
.email iframe{width:100%;height:520px;border:1px solid #d0d7de;border-radius:4px;background:#fff}
.meta{margin-bottom:6px}
.card{max-width:360px;background:#e8eaed;border-radius:14px;padding:10px 14px}.card .title{font-weight:600}
.bubble{max-width:320px;background:#e5e5ea;border-radius:18px;padding:8px 12px;white-space:pre-wrap}
.size,.to{color:#57606a;font-size:12px;margin-top:4px}
</style></head><body>
<h1>notifier outbox</h1>
<p><a href="/outcomes">outcomes table</a> · <a href="/outbox.json">outbox.json</a></p>
<p class="summary">${total} notifications: ${Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([s, c]) => `${html(s)} ${c}`)
    .join(
      ' · ',
    )}${total > shown.length ? ` — the first ${shown.length} shown; all of them in <a href="/outbox.json">outbox.json</a>` : ''}</p>
${rows.join('\n')}
</body></html>`;
}

export interface Outbox {
  readonly url: string;
  stop(): Promise<void>;
}

export async function startOutbox(sources: OutboxSources, port = 0): Promise<Outbox> {
  const server: Server = createServer(async (req, res) => {
    try {
      const page = sources.pages?.[req.url ?? ''];
      if (page !== undefined) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        return void res.end(page());
      }
      if (req.url === '/outbox.json') {
        // Written a page of the table at a time: every notification, whatever the run's size.
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
        let first = true;
        res.write('[');
        for await (const notifications of sources.notificationPages()) {
          for (const entry of outboxEntries(notifications, sources.sends())) {
            res.write(`${first ? '' : ','}${JSON.stringify(entry)}`);
            first = false;
          }
          // A slow reader holds the next page back, rather than the run holding every page for it.
          if (res.writableNeedDrain) await once(res, 'drain');
        }
        return void res.end(']');
      }
      if (req.url !== '/' && req.url !== '/index.html') {
        res.writeHead(404, { 'content-type': 'text/plain' });
        return void res.end('not found');
      }
      const counts: Record<string, number> = {};
      const shown = new BoundedList<OutboxNotification>(PAGE_LIMIT, (a, b) =>
        a.notificationId.localeCompare(b.notificationId),
      );
      for await (const notifications of sources.notificationPages()) {
        for (const n of notifications) {
          counts[n.status] = (counts[n.status] ?? 0) + 1;
          shown.add(n);
        }
      }
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        // The emails are the bank's HTML: no script runs on this page, nothing is fetched from elsewhere.
        'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-src 'self'",
      });
      res.end(outboxPage(outboxEntries(shown.list(), sources.sends()), counts, shown.total));
    } catch (error) {
      // Mid-way through outbox.json the status line is gone: cut the response, so the reader sees it is incomplete.
      if (res.headersSent) return void res.destroy(error as Error);
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end(`outbox unavailable: ${(error as Error).message}`);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
