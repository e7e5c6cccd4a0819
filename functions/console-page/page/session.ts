/**
 * Signing in: the page holds the identity provider's ID token for this tab only (sessionStorage: gone with the tab)
 * and sends it with every API request; the gateway's authorizer checks it. Two ways to get one, as config.json says:
 * - cognito: the authorization code flow with PKCE against the user pool's sign-in page, which hands over to the
 *   bank's identity provider (the app client has no secret: a page cannot keep one);
 * - local: the local run's users, one click each (tools/local/console.ts signs the token and checks it).
 */

export type SignIn =
  | {
      readonly kind: 'cognito';
      readonly authorizeUrl: string;
      readonly tokenUrl: string;
      readonly logoutUrl: string;
      readonly clientId: string;
      readonly identityProvider?: string;
    }
  | { readonly kind: 'local'; readonly users: readonly { username: string; name: string; roles: string[] }[] };

const TOKEN = 'notifier-console:token';
const PKCE = 'notifier-console:pkce';

/** Where the identity provider sends the browser back: this page, without its query. */
const here = () => `${location.origin}${location.pathname}`;

/** The token, while it has more than a minute left. */
export function currentToken(): string | undefined {
  const token = sessionStorage.getItem(TOKEN) ?? undefined;
  if (token === undefined) return undefined;
  const exp = Number(claimsOf(token).exp ?? 0) * 1000;
  if (exp - 60_000 < Date.now()) {
    sessionStorage.removeItem(TOKEN);
    return undefined;
  }
  return token;
}

export function claimsOf(token: string): Record<string, unknown> {
  try {
    const part = (token.split('.')[1] ?? '').replace(/-/g, '+').replace(/_/g, '/');
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(part), (c) => c.charCodeAt(0))));
  } catch {
    return {};
  }
}

export function forget(): void {
  sessionStorage.removeItem(TOKEN);
}

export async function signInLocally(username: string): Promise<void> {
  const answer = await fetch('console/local/sign-in', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username }),
  });
  if (!answer.ok) throw new Error(`sign-in refused (${answer.status})`);
  const { token } = (await answer.json()) as { token: string };
  sessionStorage.setItem(TOKEN, token);
}

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

/** Off to the user pool's sign-in page (and from there the bank's identity provider). */
export async function startSignIn(c: Extract<SignIn, { kind: 'cognito' }>): Promise<void> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const state = base64url(crypto.getRandomValues(new Uint8Array(16)));
  const challenge = base64url(
    new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))),
  );
  sessionStorage.setItem(PKCE, JSON.stringify({ verifier, state }));
  const url = new URL(c.authorizeUrl);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: c.clientId,
    redirect_uri: here(),
    scope: 'openid email profile',
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...(c.identityProvider === undefined ? {} : { identity_provider: c.identityProvider }),
  }).toString();
  location.assign(url.toString());
}

/** Back from the sign-in page with a code: exchanged for the tokens, then the code leaves the address bar. */
export async function finishSignIn(c: Extract<SignIn, { kind: 'cognito' }>): Promise<boolean> {
  const params = new URLSearchParams(location.search);
  const code = params.get('code');
  if (code === null) return false;
  const pkce = JSON.parse(sessionStorage.getItem(PKCE) ?? '{}') as { verifier?: string; state?: string };
  sessionStorage.removeItem(PKCE);
  history.replaceState(null, '', here());
  if (pkce.verifier === undefined || params.get('state') !== pkce.state) throw new Error('sign-in answer not ours');
  const answer = await fetch(c.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      client_id: c.clientId,
      code,
      redirect_uri: here(),
      code_verifier: pkce.verifier,
    }),
  });
  if (!answer.ok) throw new Error(`sign-in failed (${answer.status})`);
  const tokens = (await answer.json()) as { id_token?: string };
  if (tokens.id_token === undefined) throw new Error('sign-in gave no ID token');
  sessionStorage.setItem(TOKEN, tokens.id_token);
  return true;
}

export function signOut(c: SignIn): void {
  forget();
  if (c.kind === 'cognito') {
    const url = new URL(c.logoutUrl);
    url.search = new URLSearchParams({ client_id: c.clientId, logout_uri: here() }).toString();
    location.assign(url.toString());
  } else location.reload();
}
