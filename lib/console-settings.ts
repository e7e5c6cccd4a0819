/**
 * The support console's settings (`console` in the settings file; absent: no console is deployed). The console is
 * private — reached only through the bank's own VPC endpoints for API Gateway — and its users sign in at the bank's
 * identity provider over SAML (IAM Identity Center, Entra ID, ADFS, Okta all speak it), federated through a Cognito
 * user pool that only hands out tokens: nobody has a password in it (docs/console.md).
 */
import { z } from 'zod';

const groupNames = z.array(z.string().min(1).max(256)).min(1);

export const consoleSettingsSchema = z.object({
  /** The interface VPC endpoints (com.amazonaws.<region>.execute-api) staff reach the console through: no other way. */
  vpcEndpointIds: z.array(z.string().regex(/^vpce-[0-9a-f]{8,17}$/, 'must be VPC endpoint ids (vpce-...)')).min(1),
  /** The sign-in domain's prefix: https://<prefix>.auth.<region>.amazoncognito.com. */
  signInDomainPrefix: z
    .string()
    .regex(
      /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/,
      'must be lowercase letters, digits and hyphens (a Cognito domain prefix)',
    ),
  /** The bank's identity provider, over SAML: its metadata document's URL, and the attributes it sends. */
  saml: z.object({
    /** How the provider is named on the sign-in page (letters, digits, spaces, . _ -). */
    name: z.string().regex(/^[\w\s.-]{1,32}$/, 'must be 1-32 letters, digits, spaces, dots, hyphens or underscores'),
    metadataUrl: z.url({ protocol: /^https$/, error: 'must be the https URL of the SAML metadata document' }),
    /** The SAML attribute that carries a person's groups (IAM Identity Center: one you name; Entra ID: its groups claim). */
    groupsAttribute: z.string().min(1),
    emailAttribute: z.string().min(1).default('http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress'),
    nameAttribute: z.string().min(1).default('http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name'),
  }),
  /** Which of the provider's groups make a person support staff, and which an approver (functions/console/caller.ts). */
  groups: z.object({ support: groupNames, approver: groupNames }),
  /** How long a sign-in lasts (the ID token's life), in minutes. */
  sessionMinutes: z.coerce.number().int().min(5).max(720).default(60),
});

export type ConsoleSettings = z.infer<typeof consoleSettingsSchema>;
