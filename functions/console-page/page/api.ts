/** The console's API, as the page calls it: the token on every request, the server's words on every refusal. */
import { currentToken, forget } from './session.ts';

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

/** Called when the server no longer accepts the token: the page asks the person to sign in again. */
let onSignedOut: () => void = () => undefined;
export const whenSignedOut = (f: () => void) => {
  onSignedOut = f;
};

export async function call<T>(route: string, body?: unknown): Promise<T> {
  const token = currentToken();
  if (token === undefined) {
    onSignedOut();
    throw new ApiError('Your sign-in has ended: sign in again.', 401, undefined);
  }
  const answer = await fetch(`console/api/${route}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await answer.json().catch(() => ({}))) as { error?: { message?: string; code?: string } };
  if (answer.status === 401) {
    forget();
    onSignedOut();
  }
  if (!answer.ok) {
    throw new ApiError(
      json.error?.message ?? `The console could not answer (${answer.status}).`,
      answer.status,
      json.error?.code,
    );
  }
  return json as T;
}
