import { startDynamoDbLocal } from '../local/dynamodb-local.ts';
import { play } from './play.ts';
import { drawSchedule } from './schedule.ts';
import { judgeSchedule } from './verdict.ts';

let t = performance.now();
const a = await startDynamoDbLocal();
const b = await startDynamoDbLocal();
console.log('start', Math.round(performance.now() - t));
try {
  for (const seed of [2, 3, 4]) {
    t = performance.now();
    const p = await play([a.endpoint, b.endpoint], drawSchedule(seed), {});
    const v = judgeSchedule(p);
    console.log(seed, v.scenario, v.pass, v.broken, Math.round(performance.now() - t));
  }
} finally {
  await a.stop();
  await b.stop();
}
