/**
 * `ops held`: the notices a failover held in this region's replica, page by page (docs/regions.md "Runbook"). It reads
 * and changes nothing; `release-held` and `settle-held` (commands-act.ts) decide each.
 */
import { CHANNELS, type Channel } from '../../functions/domain/channels.ts';
import { listHeld } from '../../functions/operator/index.ts';
import { UsageError } from '../local/cli.ts';
import { type Command, type Given, OPS_EXIT } from './command.ts';
import { heldText } from './text/held.ts';

/** --channel narrows the listing; without it, every channel's held notices. */
const channelOf = (c: Given): Channel | undefined => {
  const given = c.values.channel;
  if (given === undefined) return undefined;
  const channel = given.toUpperCase();
  if (!(CHANNELS as readonly string[]).includes(channel))
    throw new UsageError(`--channel must be one of ${CHANNELS.join(', ')}`);
  return channel as Channel;
};

export const held: Command = {
  arity: [0, 0],
  check: (c) => void channelOf(c),
  async run(c) {
    const channel = channelOf(c);
    const after = c.values.after;
    let listing: Awaited<ReturnType<typeof listHeld>>;
    try {
      listing = await listHeld(c.target.ports, {
        ...(channel === undefined ? {} : { channel }),
        ...(after === undefined ? {} : { after }),
      });
    } catch (error) {
      if (error instanceof RangeError) throw new UsageError(`--after: ${error.message}`);
      throw error;
    }
    c.out(listing, heldText(listing));
    return OPS_EXIT.OK;
  },
};
