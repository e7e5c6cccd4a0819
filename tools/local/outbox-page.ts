/**
 * The local run's outbox page: every notification with its outcome (status, what SES reported after accepting it,
 * why it was not sent) next to what the providers received, on one page. Up while the run lasts (`--keep` to browse).
 * The SES emulator's own viewer shows the emails themselves.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Outcome } from './outcomes.ts';

export interface OutboxRow extends Outcome {
  readonly channel: string;
  /** What the provider received: a subject or the first line of the text; null when nothing was sent. */
  readonly sent: string | null;
}

const htmlText = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

const COLOURS: Record<string, string> = {
  SENT: '#1a7f37',
  SUPPRESSED: '#9a6700',
  FAILED: '#cf222e',
  UNKNOWN: '#8250df',
  BOUNCED: '#cf222e',
  COMPLAINED: '#cf222e',
  DELIVERED: '#1a7f37',
};

export function outboxHtml(rows: readonly OutboxRow[], viewerUrl: string): string {
  const cell = (v: string | null) =>
    v === null ? '<td class="none">–</td>' : `<td style="color:${COLOURS[v] ?? 'inherit'}">${htmlText(v)}</td>`;
  const body = rows
    .map(
      (r) =>
        `<tr><td><code>${htmlText(r.notificationId)}</code></td><td>${htmlText(r.channel)}</td>${cell(r.status)}${cell(
          r.deliveryStatus,
        )}<td>${r.reason === null ? '' : htmlText(r.reason)}</td><td>${r.sent === null ? '<span class="none">not sent</span>' : htmlText(r.sent)}</td></tr>`,
    )
    .join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>notifier outbox</title>
<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{padding:4px 10px;border-bottom:1px solid #ddd;text-align:left}.none{color:#888}</style>
</head><body><h1>notifier outbox</h1>
<p>One row per notification: its status, what the provider (SES, SNS) reported after accepting it, why it was not sent or not delivered, and what the provider received. The emails themselves: <a href="${htmlText(viewerUrl)}">the SES emulator's viewer</a>.</p>
<table><thead><tr><th>notification</th><th>channel</th><th>status</th><th>delivery</th><th>reason</th><th>received by the provider</th></tr></thead>
<tbody>
${body}
</tbody></table></body></html>`;
}

export async function startOutboxPage(
  rows: () => readonly OutboxRow[],
  viewerUrl: string,
): Promise<{ url: string; stop(): Promise<void> }> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET') {
      res.writeHead(405).end();
      return;
    }
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
    });
    res.end(outboxHtml(rows(), viewerUrl));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
