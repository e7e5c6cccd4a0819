import { startDynamoDbLocal } from '../local/dynamodb-local.ts';
import { play } from './play.ts';
import { drawSchedule } from './schedule.ts';
import { judgeSchedule } from './verdict.ts';

const a = await startDynamoDbLocal();
const b = await startDynamoDbLocal();
try {
  const seed = Number(process.argv[2] ?? 3);
  const p = await play([a.endpoint, b.endpoint], drawSchedule(seed), {});
  console.log(judgeSchedule(p).broken, p.reconciliation, p.errors.slice(0, 3));
  for (const i of p.items)
    if (i.kind === 'NOTIFICATION' && (i.status === 'PENDING' || i.status === 'SENDING'))
      console.log(i.sk, i.eventId, i.status, i.owner, i.epoch, i.retryAt, i.lastError, i.updatedAt, i.late);
  for (const i of p.oldItems)
    if (i.eventId === 'drill-3-8' && i.kind === 'NOTIFICATION')
      console.log('A', i.sk, i.status, i._replica, i.updatedAt);
  for (const i of p.items)
    if (i.eventId === 'drill-3-8' && i.kind === 'NOTIFICATION')
      console.log('B', i.sk, i.status, i._replica, i.updatedAt);
  console.log(p.schedule.failAt, p.promotedAt);
} finally {
  await a.stop();
  await b.stop();
}
