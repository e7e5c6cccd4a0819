/**
 * The provider adapters' typed send error: each failed SES SendEmail / SNS Publish is classed by what the provider
 * may have done with the message (functions/domain/send-outcome.ts says what each class does to the notification).
 * How a provider's error is classed is provider-errors.ts, loaded with the sender at cold start.
 */
import type { Channel } from '../domain/channels.ts';
import type { PublishOrigin } from '../domain/push-endpoint.ts';
import type { SendFailureClass } from '../domain/send-outcome.ts';

export class SendError extends Error {
  override name = 'SendError';
  /** What a FAILED notification records: the code, or the code with why it is this message's own fault. */
  readonly reason: string;
  constructor(
    readonly failure: SendFailureClass,
    /** The provider's error code (or the socket's), for the reason and the metrics: never an address. */
    readonly code: string,
    message: string,
    options?: ErrorOptions & { reason?: string },
  ) {
    super(message, options);
    this.reason = options?.reason ?? code;
  }
}

/** The send a failure belongs to: some answers mean one thing for one address and another for the account. */
export interface SendTarget {
  readonly channel: Channel;
  readonly recipient: string;
  /** Our own account and region; without them an AuthorizationError stays the account's (the cautious reading). */
  readonly origin?: PublishOrigin;
}
