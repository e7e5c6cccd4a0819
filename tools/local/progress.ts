/** The run's progress on standard error: a line rewritten in place on a terminal, a line every 10 s otherwise. */

const duration = (seconds: number) =>
  seconds >= 3600
    ? `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`
    : seconds >= 60
      ? `${Math.floor(seconds / 60)}m${String(Math.round(seconds % 60)).padStart(2, '0')}s`
      : `${Math.round(seconds)}s`;

/**
 * The live progress line: on a terminal, one line rewritten in place at most 4 times a second; otherwise a line every
 * 10 s, so a log file of a long run is not flooded.
 */
export class Progress {
  private last = performance.now();
  private shown = false;
  private started = performance.now();
  constructor(
    private readonly write: (text: string) => void,
    private readonly tty: boolean,
  ) {}
  /** The rates count from the first record, not from the set-up. */
  start() {
    this.started = performance.now();
    this.last = this.started;
  }
  message(text: string) {
    this.clear();
    this.write(`[notifier] ${text}\n`);
  }
  update(records: number, sends: number, fraction: number | undefined, force = false) {
    const now = performance.now();
    if (!force && now - this.last < (this.tty ? 250 : 10_000)) return;
    // A short run off a terminal needs no progress at all: its summary follows at once.
    if (force && !this.tty && now - this.started < 10_000) return;
    this.last = now;
    const seconds = (now - this.started) / 1000;
    const eta =
      fraction !== undefined && fraction > 0.01 && fraction < 1
        ? ` · ETA ${duration((seconds / fraction) * (1 - fraction))}`
        : '';
    const line = `[notifier] ${records.toLocaleString('en-US')} records${fraction === undefined ? '' : ` (${Math.floor(fraction * 100)}%)`} · ${Math.round(records / Math.max(seconds, 0.001))} events/s · ${Math.round(sends / Math.max(seconds, 0.001))} sends/s${eta}`;
    if (this.tty) {
      this.write(`\r\x1b[K${line}`);
      this.shown = true;
    } else this.write(`${line}\n`);
  }
  clear() {
    if (this.shown) this.write('\r\x1b[K');
    this.shown = false;
  }
}
