/**
 * The trail the protection watch reads, as `npm run smoke` checks it against a mocked CloudTrail client: a trail
 * covering the region (its own, a multi-region one, an organization's shadow) that is logging and records read and
 * write management events of every watched service passes; none, a stopped one, one of another region, one that
 * leaves out reads or KMS, or one nobody may read fails, saying why.
 */
import {
  CloudTrailClient,
  DescribeTrailsCommand,
  GetEventSelectorsCommand,
  GetTrailStatusCommand,
} from '@aws-sdk/client-cloudtrail';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { checkDataEvents, watchedOf } from '../../tools/ops/data-events-check.ts';
import { checkTrail } from '../../tools/ops/trail-check.ts';

const client = new CloudTrailClient({});
const mock = mockClient(client);
const REGION = 'ap-northeast-1';
const ORG = 'arn:aws:cloudtrail:us-east-1:999999999999:trail/org-trail';
const LOCAL = `arn:aws:cloudtrail:${REGION}:123456789012:trail/local`;
const OTHER = 'arn:aws:cloudtrail:eu-west-1:123456789012:trail/ireland';
const ALL = { EventSelectors: [{ ReadWriteType: 'All' as const, IncludeManagementEvents: true }] };

const trails = (...t: { TrailARN: string; HomeRegion: string; IsMultiRegionTrail: boolean }[]) =>
  mock.on(DescribeTrailsCommand, { includeShadowTrails: true }).resolves({ trailList: t });
const logging = (arn: string, isLogging = true) =>
  mock.on(GetTrailStatusCommand, { Name: arn }).resolves({ IsLogging: isLogging });
const selectors = (arn: string, answer: object) =>
  mock.on(GetEventSelectorsCommand, { TrailName: arn }).resolves(answer);

beforeEach(() => mock.reset());

describe('the trail the protection watch reads', () => {
  it("an organization's multi-region trail, seen here as its shadow, logging everything: passes, asked by its ARN", async () => {
    trails({ TrailARN: ORG, HomeRegion: 'us-east-1', IsMultiRegionTrail: true });
    logging(ORG);
    selectors(ORG, ALL);
    const verdict = await checkTrail(client, REGION);
    expect(verdict).toEqual({
      ok: true,
      lines: [`trail ${ORG}: logging, records read and write management events of ${REGION}`],
    });
    expect(mock.commandCalls(GetTrailStatusCommand)[0]?.args[0].input).toEqual({ Name: ORG });
  });

  it('no trail: fails, saying the watch receives nothing', async () => {
    trails();
    const verdict = await checkTrail(client, REGION);
    expect(verdict.ok).toBe(false);
    expect(verdict.lines).toEqual([
      `no CloudTrail trail covers ${REGION}`,
      expect.stringMatching(
        /^no logging trail records management events in ap-northeast-1: the protection watch receives nothing/,
      ),
    ]);
  });

  it('a stopped trail, or one of another region only: fails, naming each', async () => {
    trails(
      { TrailARN: LOCAL, HomeRegion: REGION, IsMultiRegionTrail: false },
      { TrailARN: OTHER, HomeRegion: 'eu-west-1', IsMultiRegionTrail: false },
    );
    logging(LOCAL, false);
    const verdict = await checkTrail(client, REGION);
    expect(verdict.ok).toBe(false);
    expect(verdict.lines).toEqual(
      expect.arrayContaining([
        `trail ${LOCAL}: not logging (stopped)`,
        `trail ${OTHER}: records eu-west-1 only, not ${REGION}`,
      ]),
    );
  });

  it('write-only management events miss AssumeRole, a read: fails; a second trail that records reads completes it', async () => {
    trails({ TrailARN: LOCAL, HomeRegion: REGION, IsMultiRegionTrail: false });
    logging(LOCAL);
    selectors(LOCAL, { EventSelectors: [{ ReadWriteType: 'WriteOnly', IncludeManagementEvents: true }] });
    const writesOnly = await checkTrail(client, REGION);
    expect(writesOnly.ok).toBe(false);
    expect(writesOnly.lines.join('\n')).toMatch(
      /does not record s3\.amazonaws\.com reads, .*sts\.amazonaws\.com reads/,
    );
    trails(
      { TrailARN: LOCAL, HomeRegion: REGION, IsMultiRegionTrail: false },
      { TrailARN: ORG, HomeRegion: 'us-east-1', IsMultiRegionTrail: true },
    );
    logging(ORG);
    selectors(ORG, { EventSelectors: [{ ReadWriteType: 'ReadOnly', IncludeManagementEvents: true }] });
    expect((await checkTrail(client, REGION)).ok).toBe(true);
  });

  it('a trail that leaves KMS out hides every change to the keys: fails, naming KMS', async () => {
    trails({ TrailARN: LOCAL, HomeRegion: REGION, IsMultiRegionTrail: false });
    logging(LOCAL);
    selectors(LOCAL, {
      EventSelectors: [
        { ReadWriteType: 'All', IncludeManagementEvents: true, ExcludeManagementEventSources: ['kms.amazonaws.com'] },
      ],
    });
    const verdict = await checkTrail(client, REGION);
    expect(verdict.ok).toBe(false);
    expect(verdict.lines.at(-1)).toMatch(
      /^no logging trail records kms\.amazonaws\.com reads, kms\.amazonaws\.com writes:/,
    );
  });

  it('advanced selectors: management events, reads and writes, pass; one that excludes an event source the watch reads does not', async () => {
    trails({ TrailARN: LOCAL, HomeRegion: REGION, IsMultiRegionTrail: false });
    logging(LOCAL);
    const management = (...more: { Field: string; Equals?: string[]; NotEquals?: string[] }[]) => ({
      FieldSelectors: [{ Field: 'eventCategory', Equals: ['Management'] }, ...more],
    });
    selectors(LOCAL, {
      AdvancedEventSelectors: [
        management({ Field: 'readOnly', Equals: ['true'] }),
        management({ Field: 'readOnly', Equals: ['false'] }),
        {
          FieldSelectors: [
            { Field: 'eventCategory', Equals: ['Data'] },
            { Field: 'resources.type', Equals: ['AWS::S3::Object'] },
          ],
        },
      ],
    });
    expect((await checkTrail(client, REGION)).ok).toBe(true);
    selectors(LOCAL, {
      AdvancedEventSelectors: [management({ Field: 'eventSource', NotEquals: ['lambda.amazonaws.com'] })],
    });
    const verdict = await checkTrail(client, REGION);
    expect(verdict.ok).toBe(false);
    expect(verdict.lines.at(-1)).toMatch(/lambda\.amazonaws\.com reads, lambda\.amazonaws\.com writes/);
  });

  it('in us-east-1 the trail must record IAM too: the watch reads IAM changes to its roles there', async () => {
    trails({ TrailARN: ORG, HomeRegion: 'us-east-1', IsMultiRegionTrail: true });
    logging(ORG);
    selectors(ORG, {
      AdvancedEventSelectors: [
        {
          FieldSelectors: [
            { Field: 'eventCategory', Equals: ['Management'] },
            { Field: 'eventSource', NotEquals: ['iam.amazonaws.com'] },
          ],
        },
      ],
    });
    expect((await checkTrail(client, 'us-east-1')).ok).toBe(false);
    expect((await checkTrail(client, REGION)).ok).toBe(true);
  });

  it('a trail nobody may read is no trail: AccessDenied fails the check, with the reason', async () => {
    const denied = Object.assign(new Error('not authorized to perform: cloudtrail:DescribeTrails'), {
      name: 'AccessDeniedException',
    });
    mock.on(DescribeTrailsCommand).rejects(denied);
    expect(await checkTrail(client, REGION)).toEqual({
      ok: false,
      lines: [
        'cannot list the trails (cloudtrail:DescribeTrails): AccessDeniedException: not authorized to perform: cloudtrail:DescribeTrails',
      ],
    });
    trails({ TrailARN: ORG, HomeRegion: 'us-east-1', IsMultiRegionTrail: true });
    mock.on(GetTrailStatusCommand).rejects(Object.assign(new Error('denied'), { name: 'AccessDeniedException' }));
    const verdict = await checkTrail(client, REGION);
    expect(verdict.ok).toBe(false);
    expect(verdict.lines[0]).toBe(
      `trail ${ORG}: cannot read its status or event selectors: AccessDeniedException: denied`,
    );
  });
});

describe("the data events of the doors around the controls (direct invokes, the table's item writes)", () => {
  const WATCHED = watchedOf(
    { partition: 'aws', region: REGION, account: '123456789012' },
    ['notifier-prod-ingest', 'notifier-prod-operator'],
    'notifier-prod',
  );
  const [INGEST, OPERATOR, TABLE] = WATCHED.map((w) => w.arn) as [string, string, string];
  const data = (type: string, extra: { Field: string; [k: string]: unknown }[] = []) => ({
    FieldSelectors: [
      { Field: 'eventCategory', Equals: ['Data'] },
      { Field: 'resources.type', Equals: [type] },
      ...extra,
    ],
  });

  it('an advanced selector per resource type (functions by ARN, the table, writes only): passes', async () => {
    trails({ TrailARN: LOCAL, HomeRegion: REGION, IsMultiRegionTrail: false });
    logging(LOCAL);
    selectors(LOCAL, {
      AdvancedEventSelectors: [
        data('AWS::Lambda::Function', [{ Field: 'resources.ARN', Equals: [INGEST, OPERATOR] }]),
        data('AWS::DynamoDB::Table', [{ Field: 'readOnly', Equals: ['false'] }]),
      ],
    });
    expect(await checkDataEvents(client, REGION, WATCHED)).toMatchObject({ ok: true });
  });

  it('management events only, or a selector that leaves a function out or records only reads: fails, naming what is not recorded', async () => {
    trails({ TrailARN: LOCAL, HomeRegion: REGION, IsMultiRegionTrail: false });
    logging(LOCAL);
    selectors(LOCAL, ALL);
    const none = await checkDataEvents(client, REGION, WATCHED);
    expect(none.ok).toBe(false);
    expect(none.lines.at(-1)).toContain(`Invoke of ${INGEST}, Invoke of ${OPERATOR}, item writes on ${TABLE}`);
    selectors(LOCAL, {
      AdvancedEventSelectors: [
        data('AWS::Lambda::Function', [{ Field: 'resources.ARN', Equals: [INGEST] }]),
        data('AWS::DynamoDB::Table', [{ Field: 'readOnly', Equals: ['true'] }]),
      ],
    });
    const partial = await checkDataEvents(client, REGION, WATCHED);
    expect(partial.ok).toBe(false);
    expect(partial.lines.at(-1)).toContain(`Invoke of ${OPERATOR}, item writes on ${TABLE}`);
  });

  it("a selector that records Invoke alone misses a function URL's calls (InvokeFunctionUrl): fails; one admitting every Invoke name passes", async () => {
    trails({ TrailARN: LOCAL, HomeRegion: REGION, IsMultiRegionTrail: false });
    logging(LOCAL);
    const table = data('AWS::DynamoDB::Table', [{ Field: 'readOnly', Equals: ['false'] }]);
    selectors(LOCAL, {
      AdvancedEventSelectors: [data('AWS::Lambda::Function', [{ Field: 'eventName', Equals: ['Invoke'] }]), table],
    });
    const invokeOnly = await checkDataEvents(client, REGION, WATCHED);
    expect(invokeOnly.ok).toBe(false);
    expect(invokeOnly.lines.at(-1)).toContain(`Invoke of ${INGEST}, Invoke of ${OPERATOR}`);
    selectors(LOCAL, {
      AdvancedEventSelectors: [data('AWS::Lambda::Function', [{ Field: 'eventName', StartsWith: ['Invoke'] }]), table],
    });
    expect((await checkDataEvents(client, REGION, WATCHED)).ok).toBe(true);
  });

  it('a basic selector naming every function and every table, on a stopped trail: not counted; on a logging one: passes', async () => {
    trails({ TrailARN: LOCAL, HomeRegion: REGION, IsMultiRegionTrail: false });
    const basic = {
      EventSelectors: [
        {
          ReadWriteType: 'All' as const,
          DataResources: [
            { Type: 'AWS::Lambda::Function', Values: ['arn:aws:lambda'] },
            { Type: 'AWS::DynamoDB::Table', Values: ['arn:aws:dynamodb'] },
          ],
        },
      ],
    };
    selectors(LOCAL, basic);
    logging(LOCAL, false);
    expect((await checkDataEvents(client, REGION, WATCHED)).ok).toBe(false);
    logging(LOCAL);
    expect((await checkDataEvents(client, REGION, WATCHED)).ok).toBe(true);
  });
});
