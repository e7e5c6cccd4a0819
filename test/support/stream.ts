/** Builds DynamoDB Streams records in the shape the Lambda event source mapping delivers. */
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';

let sequence = 1000;
const STREAM_ARN = 'arn:aws:dynamodb:us-east-1:123456789012:table/notifier/stream/2026-11-30T00:00:00.000';

export function streamRecord(
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE',
  newImage: object | undefined,
  oldImage?: object,
): DynamoDBRecord {
  const image = (newImage ?? oldImage ?? {}) as Record<string, unknown>;
  return {
    eventID: `evt-${sequence}`,
    eventName,
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'us-east-1',
    eventSourceARN: STREAM_ARN,
    dynamodb: {
      ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
      Keys: marshall({ pk: image.pk, sk: image.sk }) as never,
      ...(newImage ? { NewImage: marshall(newImage, { removeUndefinedValues: true }) as never } : {}),
      ...(oldImage ? { OldImage: marshall(oldImage, { removeUndefinedValues: true }) as never } : {}),
      SequenceNumber: String(sequence++).padStart(21, '0'),
      SizeBytes: 512,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
  };
}

export const streamEvent = (records: DynamoDBRecord[]): DynamoDBStreamEvent => ({ Records: records });
