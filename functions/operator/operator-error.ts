/** The operator's typed refusal as an error: a module of its own, so every part of an action can throw it without a circle. */
import type { Refusal } from '../domain/refusal.ts';

/** An operator's request the system refuses: the typed refusal, with the words to show. */
export class OperatorError extends Error {
  override name = 'OperatorError';
  constructor(readonly refusal: Refusal) {
    super(refusal.message);
  }

  /** A mistake in the request (exit 2 for a command line), or a refusal of what it asks (exit 3). */
  get kind(): 'INVALID' | 'REFUSED' {
    return this.refusal.code === 'INVALID' ? 'INVALID' : 'REFUSED';
  }
}
