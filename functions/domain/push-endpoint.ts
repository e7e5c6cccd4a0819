/**
 * An SNS platform endpoint ARN and what it belongs to. Pure.
 *
 *   arn:<partition>:sns:<region>:<account>:endpoint/<PLATFORM>/<application name>/<endpoint id>
 *
 * The endpoint belongs to one platform application, whose ARN is the same prefix with `app/` in place of `endpoint/`
 * and without the endpoint id (https://docs.aws.amazon.com/sns/latest/dg/mobile-platform-endpoint.html: "CreatePlatformEndpoint
 * … PlatformApplicationArn"; the endpoint ARN is built under it). What one endpoint's or one application's failure
 * holds is decided from these parts: a disabled application (an expired APNs certificate, a revoked FCM key) refuses
 * its own endpoints only, so it is held on its own, never the whole PUSH channel.
 */
import type { Channel } from './channels.ts';

/**
 * Whether a channel's address is a platform endpoint ARN — of one application, in one account and region — so its
 * failures can be an application's or another account's rather than the channel's. Decided per channel here.
 */
export const SENT_TO_ENDPOINT: Readonly<Record<Channel, boolean>> = { EMAIL: false, PUSH: true, SMS: false };

export interface PushEndpoint {
  readonly partition: string;
  readonly region: string;
  readonly account: string;
  /** APNS, APNS_SANDBOX, GCM, … */
  readonly platform: string;
  /** arn:<partition>:sns:<region>:<account>:app/<PLATFORM>/<name> */
  readonly applicationArn: string;
}

const ENDPOINT_ARN = /^arn:(aws[a-z-]*):sns:([a-z0-9-]+):(\d{12}):endpoint\/([A-Z_]+)\/([^/]+)\/[^/]+$/;

/** The parts of a platform endpoint ARN, or undefined when the text is not one. */
export function parsePushEndpoint(arn: string): PushEndpoint | undefined {
  const m = ENDPOINT_ARN.exec(arn);
  if (m === null) return undefined;
  const [, partition = '', region = '', account = '', platform = '', name = ''] = m;
  return {
    partition,
    region,
    account,
    platform,
    applicationArn: `arn:${partition}:sns:${region}:${account}:app/${platform}/${name}`,
  };
}

/**
 * Where dispatch publishes from: its own account and region (SNS publishes to endpoints of one region), and the
 * platform applications its role may publish to (the stack grants those only).
 */
export interface PublishOrigin {
  readonly account?: string | undefined;
  readonly region?: string | undefined;
  /** The platform application ARNs dispatch may publish to; undefined when not known. */
  readonly applications?: readonly string[] | undefined;
}

/**
 * True when the endpoint is provably not one this deployment may publish to: another account's, another region's,
 * or an application the stack does not grant. Unknown (undefined) when the origin is not known, so the caller keeps
 * the cautious reading.
 */
export function isForeignEndpoint(arn: string, origin: PublishOrigin): boolean | undefined {
  const endpoint = parsePushEndpoint(arn);
  if (endpoint === undefined) return undefined;
  if (origin.region !== undefined && endpoint.region !== origin.region) return true;
  if (origin.applications !== undefined && !origin.applications.includes(endpoint.applicationArn)) return true;
  if (origin.account === undefined) return undefined;
  return endpoint.account !== origin.account;
}
