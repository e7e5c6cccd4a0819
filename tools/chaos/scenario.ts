/**
 * One chaos run: a seeded scenario (generate.ts), executed against the real pipeline in the chaos world (world.ts),
 * then judged (analyse.ts → the one verdict in verdict.ts). The expected outcome of each fault is written next to it
 * (PROVIDER_MODES in model.ts, POISON_KINDS in poison.ts, CRASH_POINTS in faults.ts).
 */

import type { DynamoDBRecord } from 'aws-lambda';
import type { Channel } from '../../functions/domain/channels.ts';
import { eventPk, notificationSk } from '../../functions/domain/keys.ts';
import { mskEvent } from '../local/msk.ts';
import { KafkaMapping, StreamMapping } from '../local/pipeline.ts';
import type { Fault } from '../local/providers.ts';
import { analyse } from './analyse.ts';
import { FaultDecisions, recordIdentity } from './calls.ts';
import { chaosInvoke, convergeRun, runSweeper } from './converge.ts';
import { clock, type DynamoFault, faultCounts } from './faults.ts';
import type { ChaosOptions, ChaosReport, EventSpec, ProviderMode, RecordSpec } from './model.ts';
import { newWitness } from './witness.ts';
import { LEASE_MS, POLICIES, type World } from './world.ts';

let runCounter = 0;

/**
 * One run's records, deliveries and stream, on its own topic and eventId prefix. The random scenario (runChaos) and
 * the fast-check model run (test/tools/chaos.test.ts) both drive it, then `finish()` converges and analyses.
 */
export class ChaosRun {
  readonly prefix = `r${process.pid % 1000}x${runCounter++}-`;
  readonly topic = `${this.prefix}topic`;
  readonly parts: RecordSpec[][];
  readonly specs: EventSpec[] = [];
  /** The local emulators of the two event source mappings, driven through the chaos world's crash contexts. */
  readonly kafka: KafkaMapping;
  readonly stream: StreamMapping;
  /** Every record the stream produced — read or trimmed away — for the transition checks. */
  readonly seen: DynamoDBRecord[] = [];
  private redeliveries = 0;
  private trimmed = 0;
  /** The current pump's fault rates (the mapping's drop and unfiltered hooks read them). */
  private dropRate = 0;
  private unfilteredRate = 0;
  readonly cursor: number[];
  /** What the run did, in order (deliveries, pumps, trims, pauses, bursts): the same seed gives the same schedule. */
  readonly schedule: string[] = [];
  private rebalances = 0;
  private readonly logStart: number;
  private readonly ledgerStart: { ses: number; sns: number };
  private readonly faultsBefore: Record<string, number>;
  private readonly providerBefore: { quotaThrottled: number; accountRefusals: number };
  private readonly applicationRefusalsBefore: number;
  private readonly metricsBefore: Record<string, number>;
  private readonly modeByAddress = new Map<string, ProviderMode>();
  /** The provider mode of each notification (pk|sk). */
  private readonly modeByKey = new Map<string, ProviderMode>();
  /** acceptThenStoreFails: how many SENT writes of a notification fail, and how many have so far. */
  private readonly storeFailures = new Map<string, { planned: number; done: number }>();
  /** The notification (eventId, channel) each address belongs to. */
  private readonly keyByAddress = new Map<string, { pk: string; sk: string; channel: Channel }>();
  /** The address whose send is slow right now (the provider holds its answer while `whileSlow` runs). */
  private slowAddress: string | undefined;
  private readonly attempts = new Map<string, number>();

  constructor(
    readonly w: World,
    readonly options: ChaosOptions,
    readonly random: () => number,
  ) {
    const partitions = options.partitions ?? 3;
    this.parts = Array.from({ length: partitions }, () => []);
    this.cursor = Array(partitions).fill(0) as number[];
    this.kafka = new KafkaMapping(w.handlers.ingest, { maxAttempts: 25, invoke: chaosInvoke });
    this.stream = new StreamMapping(w.reader, w.handlers.dispatch, {
      invoke: chaosInvoke,
      // The stack's MaximumRecordAgeInSeconds (6 h), on the suite's clock.
      maxRecordAgeMs: 6 * 3_600_000,
      now: clock.now,
      onRead: (records) => this.seen.push(...records),
      drop: (r) => this.dropRate > 0 && w.decide.unit(`stream:drop:${recordIdentity(r)}`) < this.dropRate,
      unfiltered: () => this.unfilteredRate > 0 && w.decide.unit('stream:unfiltered') < this.unfilteredRate,
    });
    this.logStart = w.logLines.length;
    this.ledgerStart = { ses: w.ses.sends.length, sns: w.sns.sends.length };
    this.faultsBefore = { ...faultCounts };
    this.providerBefore = { quotaThrottled: w.quotaThrottled(), accountRefusals: w.accountRefusals };
    this.applicationRefusalsBefore = w.applicationRefusals;
    this.metricsBefore = { ...w.output.metrics };
    w.random = random;
    // This run's fault decisions hash its seed with each operation's identity (its own prefix left out).
    w.decide = new FaultDecisions(options.seed, this.prefix);
    w.witness = newWitness();
    w.armed = [];
    w.providerFault = (_channel, to) => this.providerFault(to);
    w.sentWriteFault = (key) => this.sentWriteFault(key);
    const slowTakeover = async () => {
      // The send outlives its lease: the clock moves past it and the sweeper takes over while the send is in flight.
      clock.advance(LEASE_MS + 1_000);
      await runSweeper(w, `slow takeover ${this.slowAddress}`);
      // On an at-least-once channel the sweeper put it back to PENDING: another execution environment claims it
      // (attempt + 1) before the slow holder's answer arrives. The slow holder's SENT must now be fenced out; a write
      // that gets through is a stale write. (The new holder then dies; its lease expires and the sweeper resolves it.)
      const key = this.slowAddress === undefined ? undefined : this.keyByAddress.get(this.slowAddress);
      this.slowAddress = undefined;
      if (key !== undefined && POLICIES[key.channel] === 'AT_LEAST_ONCE') await w.takeover(key);
    };
    w.ses.whileSlow = slowTakeover;
    w.sns.whileSlow = slowTakeover;
  }

  /** An event for eventId index `id` (a small id space makes collisions); `variant` changes the amount only. */
  event(make: (i: number, prefix: string) => EventSpec): EventSpec {
    const spec = make(this.specs.length, this.prefix);
    this.specs.push(spec);
    const r = spec.value.recipient as Record<string, string>;
    if (r.email) this.modeByAddress.set(r.email, spec.modes.EMAIL);
    if (r.pushEndpointArn) this.modeByAddress.set(r.pushEndpointArn, spec.modes.PUSH);
    if (r.phoneNumber) this.modeByAddress.set(r.phoneNumber, spec.modes.SMS);
    for (const [address, channel] of [
      [r.email, 'EMAIL'],
      [r.pushEndpointArn, 'PUSH'],
      [r.phoneNumber, 'SMS'],
    ] as const) {
      if (address) this.keyByAddress.set(address, { pk: eventPk(spec.eventId), sk: notificationSk(channel), channel });
      this.modeByKey.set(`${eventPk(spec.eventId)}|${notificationSk(channel)}`, spec.modes[channel]);
    }
    return spec;
  }

  append(partition: number, record: RecordSpec): void {
    this.parts[partition % this.parts.length]!.push(record);
  }

  private providerFault(to: string): Fault {
    const n = (this.attempts.get(to) ?? 0) + 1;
    this.attempts.set(to, n);
    switch (this.modeByAddress.get(to) ?? 'ok') {
      case 'ok':
        return 'ok';
      case 'reject':
        return 'reject';
      case 'throttleOnce':
        return n === 1 ? 'throttle' : 'ok';
      case 'throttleMany':
        return n <= 6 ? 'throttle' : 'ok';
      case 'clockSkew':
        return n === 1 ? 'clockSkew' : 'ok';
      case 'acceptThen500':
        return n === 1 ? 'acceptThen500' : 'ok';
      case 'acceptThenReset':
        return n === 1 ? 'acceptThenReset' : 'ok';
      case 'acceptThenHang':
        return n === 1 ? 'acceptThenHang' : 'ok';
      case 'slow':
        if (n !== 1) return 'ok';
        this.slowAddress = to;
        return 'slow';
      // The provider accepts; what fails comes after (sentWriteFault), or is the endpoint's account (the emulator).
      case 'acceptThenStoreFails':
      case 'foreignEndpoint':
        return 'ok';
    }
  }

  /**
   * acceptThenStoreFails: the provider accepted, then DynamoDB fails the SENT write 1–3 times — throttled, a 500, a
   * timeout — each taking 4 s of the suite's clock, so three of them outlast the lease and the holder must extend it.
   */
  private sentWriteFault(key: { pk: string; sk: string }): DynamoFault | undefined {
    const id = `${key.pk}|${key.sk}`;
    if (this.modeByKey.get(id) !== 'acceptThenStoreFails') return undefined;
    const plan = this.storeFailures.get(id) ?? {
      planned: 1 + Math.floor(this.w.decide.unit(`storeFails:${id}`) * 3),
      done: 0,
    };
    this.storeFailures.set(id, plan);
    if (plan.done >= plan.planned) return undefined;
    plan.done++;
    clock.advance(4_000);
    return (['ThrottlingException', 'InternalServerError', 'requestTimeout'] as const)[plan.done % 3];
  }

  batch(p: number, from: number, to: number) {
    return mskEvent(
      this.parts[p]!.slice(from, to).map((r, j) => ({
        topic: this.topic,
        partition: p,
        offset: from + j,
        value:
          r.value === null
            ? null
            : Buffer.isBuffer(r.value)
              ? r.value
              : typeof r.value === 'string'
                ? r.value
                : JSON.stringify(r.value),
      })),
    );
  }

  /**
   * Delivers the partition's next records as one batch, `copies` times: concurrently (their start order chosen by
   * `startOrder`, e.g. fast-check's scheduler) or one after the other.
   */
  async deliverNext(
    p: number,
    max: number,
    copies: number,
    concurrent: boolean,
    startOrder?: <T>(starts: (() => Promise<T>)[]) => Promise<T[]>,
  ): Promise<void> {
    const from = this.cursor[p]!;
    const to = Math.min(from + max, this.parts[p]!.length);
    if (to <= from) return;
    this.schedule.push(`deliver ${p} ${from}-${to} x${copies}${concurrent ? ' concurrently' : ''}`);
    this.redeliveries += (copies - 1) * (to - from);
    const one = (copy: number) => () => this.kafka.deliver(this.batch(p, from, to), `${p}:${from}-${to} copy ${copy}`);
    if (concurrent) {
      const starts = Array.from({ length: copies }, (_, copy) => one(copy));
      await (startOrder ? startOrder(starts) : Promise.all(starts.map((s) => s())));
    } else for (let c = 0; c < copies; c++) await one(c)();
    this.cursor[p] = to;
  }

  /** A rebalance: the partition's new owner starts again `back` records before its committed offset. */
  async rebalance(p: number, back: number): Promise<void> {
    const to = this.cursor[p]!;
    const from = Math.max(0, to - back);
    if (to <= from) return;
    this.schedule.push(`rebalance ${p} ${from}-${to}`);
    this.redeliveries += to - from;
    await this.kafka.deliver(this.batch(p, from, to), `${p}:${from}-${to} rebalance ${this.rebalances++}`);
  }

  pump(dropRate = 0, unfilteredRate = 0): Promise<number> {
    this.schedule.push(`pump drop=${dropRate} unfiltered=${unfilteredRate}`);
    this.dropRate = dropRate;
    this.unfilteredRate = unfilteredRate;
    return this.stream.pump();
  }

  /** The 24 h trim: what is on the stream and not yet read is gone; the clock moves a day on. */
  async trim(): Promise<void> {
    this.schedule.push('trim');
    const gone = await this.w.reader.poll();
    this.seen.push(...gone);
    this.trimmed += gone.length;
    clock.advance(25 * 3_600_000);
  }

  /** A customer's PreferencesUpdated on `partition` (before their transfer there). */
  preferences(partition: number, eventId: string, userId: string, value: Record<string, unknown>): void {
    this.append(partition, { kind: 'preferences', eventId, userId, value });
  }

  /** One push platform application is disabled (every push to its endpoints refused) until `enableApps`. */
  disableApp(app: string): void {
    this.schedule.push(`disable ${app}`);
    this.w.disabledApps.add(app);
  }
  enableApps(): void {
    this.schedule.push('enable apps');
    this.w.disabledApps.clear();
  }

  /** The provider account of `channel` is paused (every send refused at the account level) until `resume`. */
  pause(channel: Channel): void {
    this.schedule.push(`pause ${channel}`);
    this.w.accountPaused.add(channel);
  }
  resume(): void {
    this.schedule.push('resume');
    this.w.accountPaused.clear();
  }

  /** Delivers what is left, converges, checks every invariant. */
  async finish(): Promise<ChaosReport> {
    this.w.dynamoFaultRate = 0;
    // Accounts recover, applications are re-enabled and quotas come back: what was held or throttled must now go
    // out, none of it FAILED.
    this.resume();
    this.enableApps();
    this.w.endQuotaBurst();
    for (const [p, records] of this.parts.entries()) {
      while (this.cursor[p]! < records.length) await this.deliverNext(p, this.options.batchSize ?? 20, 1, false);
    }
    // Converging: the stream as it is, nothing dropped, the filter intact (and not part of the schedule).
    this.dropRate = 0;
    this.unfilteredRate = 0;
    await convergeRun(this.w, () => this.stream.pump(), this.prefix);
    this.w.ses.whileSlow = undefined;
    this.w.sns.whileSlow = undefined;
    return analyse(this.w, {
      prefix: this.prefix,
      topic: this.topic,
      parts: this.parts,
      specs: this.specs,
      stats: {
        deliveries: this.kafka.deliveries,
        redeliveries: this.redeliveries,
        failedInvocations: this.kafka.failedInvocations,
      },
      stream: {
        seen: this.seen,
        dropped: this.stream.dropped,
        trimmed: this.trimmed,
        onFailure: this.stream.onFailure,
        unfilteredDeliveries: this.stream.unfilteredDeliveries,
        bisections: this.stream.bisections,
      },
      logStart: this.logStart,
      ledgerStart: this.ledgerStart,
      faultsBefore: this.faultsBefore,
      providerBefore: this.providerBefore,
      applicationRefusalsBefore: this.applicationRefusalsBefore,
      modeByAddress: this.modeByAddress,
      metricsBefore: this.metricsBefore,
      options: this.options,
      schedule: this.schedule,
    });
  }
}
