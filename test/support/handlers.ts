/**
 * The real handlers on a DynamoDB Local table, with provider endpoints that answer nothing: the tests mock the SES and
 * SNS clients (providerMocks), so no request ever reaches them.
 */
import { type Handlers, type LocalEnvironment, loadHandlers } from '../../tools/local/pipeline.ts';
import type { LocalTable } from './local-table.ts';

const NOWHERE = 'http://127.0.0.1:9';

export const handlersOn = (table: LocalTable, extra?: LocalEnvironment['extra']): Promise<Handlers> =>
  loadHandlers({
    dynamoEndpoint: table.endpoint,
    sesEndpoint: NOWHERE,
    snsEndpoint: NOWHERE,
    tableName: table.tableName,
    ...(extra === undefined ? {} : { extra }),
  });
