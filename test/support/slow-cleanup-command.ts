/**
 * A command whose main never heeds the abort and whose one cleanup is slow: says "ready", and "cleaning" when its
 * cleanup starts; the cleanup writes the file named on the command line when it is done.
 */
import { writeFileSync } from 'node:fs';
import { onExit, runCommand } from '../../tools/local/cli.ts';

const done = process.argv[2] as string;
runCommand(
  'slow',
  async () => {
    onExit(async () => {
      process.stderr.write('cleaning\n');
      await new Promise((r) => setTimeout(r, 1_000));
      writeFileSync(done, 'cleaned');
    });
    process.stderr.write('ready\n');
    // Busy for ever, as a main stuck on a call would be.
    setInterval(() => undefined, 60_000);
    return new Promise<number>(() => undefined);
  },
  100,
);
