/**
 * The sender of an email as a reader sees it: `"Example Bank" <a@b>` or `=?UTF-8?B?…?= <a@b>` (RFC 2047
 * encoded-words, how a non-ASCII name is sent: dispatch's `mailbox`) → the display name, decoded. Pure.
 */
export function displayName(source: string): string {
  const name = source.replace(/\s*<[^>]*>$/, '');
  return name
    .replace(/=\?UTF-8\?B\?([A-Za-z0-9+/=]+)\?=\s*/g, (_, b64: string) => Buffer.from(b64, 'base64').toString('utf8'))
    .replace(/^"(.*)"$/, '$1')
    .replace(/\\(.)/g, '$1');
}
