/**
 * The failed MSK batches the mapping parked in S3 (its on-failure destination): for each, the invocation record with
 * the whole original event under `payload` (AWS: "For Amazon S3 destinations, Lambda also sends the entire invocation
 * record"). Read only: a replay feeds them to the ingest function again.
 */
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { MSKEvent } from 'aws-lambda';
import { refusal } from '../domain/refusal.ts';
import { OperatorError } from './operator-error.ts';

export interface ParkedObject {
  readonly key: string;
  readonly lastModified: Date;
}

export interface ParkedBatches {
  /** The parked objects last modified at or after `since`, oldest first. */
  list(since: Date | undefined): Promise<ParkedObject[]>;
  /** The MSK event a parked object holds. */
  event(key: string): Promise<MSKEvent>;
}

export class S3ParkedBatches implements ParkedBatches {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  async list(since: Date | undefined): Promise<ParkedObject[]> {
    const objects: ParkedObject[] = [];
    let token: string | undefined;
    do {
      const page = await this.s3.send(new ListObjectsV2Command({ Bucket: this.bucket, ContinuationToken: token }));
      for (const o of page.Contents ?? []) {
        if (o.Key === undefined || o.LastModified === undefined) continue;
        if (since !== undefined && o.LastModified < since) continue;
        objects.push({ key: o.Key, lastModified: o.LastModified });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return objects.sort((a, b) => a.lastModified.getTime() - b.lastModified.getTime());
  }

  async event(key: string): Promise<MSKEvent> {
    const answer = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    return parkedEvent((await answer.Body?.transformToString('utf8')) ?? '', key);
  }
}

/**
 * The MSK event of a parked invocation record, taken as a JSON object or a JSON string under `payload`, whichever the
 * object holds; anything else is refused, never guessed at.
 */
export function parkedEvent(objectText: string, key: string): MSKEvent {
  const invalid = (message: string) => new OperatorError(refusal('INVALID', `s3 object ${key} ${message}`));
  let doc: unknown;
  try {
    doc = JSON.parse(objectText);
  } catch {
    throw invalid('is not JSON');
  }
  let payload = (doc as { payload?: unknown }).payload;
  if (typeof payload === 'string') {
    try {
      payload = JSON.parse(payload);
    } catch {
      throw new OperatorError(refusal('INVALID', `s3 object ${key}: payload is not JSON`));
    }
  }
  const event = payload as Partial<MSKEvent> | undefined;
  if (event?.eventSource !== 'aws:kafka' || typeof event.records !== 'object' || event.records === null) {
    throw invalid('holds no MSK invocation record under "payload"');
  }
  return event as MSKEvent;
}
