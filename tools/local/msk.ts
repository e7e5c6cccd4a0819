/**
 * MSK events in the exact shape the Lambda event source mapping delivers, for the local run's emulated mapping and the
 * tests: the operator's own builder (functions/operator/msk-event.ts), which its replays feed the ingest function.
 */
export {
  CLUSTER_ARN,
  type KafkaRecordSpec,
  mskEvent,
  mskRecord,
  valueBytes,
} from '../../functions/operator/index.ts';
