/**
 * The support console's two functions' environments (the contract environment.ts keeps for the pipeline's): the API
 * function reads the table and the evidence store and maps the identity provider's groups to console roles; the page
 * function only tells the page how to sign in.
 */
import { AUDIT_SEAL, EVIDENCE_ENVIRONMENT, EVIDENCE_INDEX, OPERATOR_ENVIRONMENT } from './environment.ts';
import { DEPLOYED, type EnvironmentOf, type EnvSpec, optionalText, text } from './environment-keys.ts';

export const CONSOLE_ENVIRONMENT = {
  TABLE_NAME: text('nonEmpty'),
  ...EVIDENCE_INDEX,
  ...EVIDENCE_ENVIRONMENT,
  // Four eyes and proposals as the operator API has them: the console proposes and approves through the same operations.
  INBOX_RETENTION_DAYS: OPERATOR_ENVIRONMENT.INBOX_RETENTION_DAYS,
  APPROVAL_REQUIRED_FOR: OPERATOR_ENVIRONMENT.APPROVAL_REQUIRED_FOR,
  PROPOSAL_HOURS: OPERATOR_ENVIRONMENT.PROPOSAL_HOURS,
  IDENTITY_CENTER_USER_NAME_IS_EMAIL: OPERATOR_ENVIRONMENT.IDENTITY_CENTER_USER_NAME_IS_EMAIL,
  // Its audit records are sealed with the same key as the operator function's.
  ...AUDIT_SEAL,
  /**
   * Which of the identity provider's groups make a person which console role (functions/console/caller.ts):
   * {"support": ["…"], "approver": ["…"]}, from the settings' `console.groups`.
   */
  CONSOLE_GROUPS: text('nonEmpty', DEPLOYED),
  /**
   * The role that may decrypt evidence (lib/evidence-key.ts: the key lets no other principal): the function reads
   * evidence and writes its audit records as that role. Unset: its own credentials (the local run's folder).
   */
  EVIDENCE_READER_ROLE_ARN: optionalText({ pattern: /^arn:aws[a-z-]*:iam::\d{12}:role\/.+$/, must: 'a role ARN' }),
} as const satisfies EnvSpec;

export const CONSOLE_PAGE_ENVIRONMENT = {
  /**
   * How the page signs in, as JSON served at config.json: {"kind": "cognito", "authorizeUrl", "tokenUrl",
   * "logoutUrl", "clientId", "identityProvider"} — public values, no secret (the app client has none: the page uses
   * PKCE). The local run serves {"kind": "local", "users": […]} instead.
   */
  CONSOLE_SIGN_IN: text('nonEmpty', DEPLOYED),
} as const satisfies EnvSpec;

export type ConsoleEnvironment = EnvironmentOf<typeof CONSOLE_ENVIRONMENT>;
export type ConsolePageEnvironment = EnvironmentOf<typeof CONSOLE_PAGE_ENVIRONMENT>;
