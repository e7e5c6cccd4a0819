/**
 * The support console's API (functions/console/api.ts) and who it takes the caller to be (caller.ts): nobody is
 * answered without a verified caller, each route is allowed only to the roles that may, every action goes through
 * the operations as the identity the authorizer verified (never a name from the request), with the reason the
 * person gave, and a refusal is answered with its true code. The contact masks and the page's security headers too.
 */
import { describe, expect, it, vi } from 'vitest';
import { answerApi, type ConsoleDeps } from '../../functions/console/api.ts';
import { type Caller, callerOf, groupsIn, parseGroupRoles } from '../../functions/console/caller.ts';
import { refusalWords, resendChoice } from '../../functions/console/views.ts';
import { pageHeaders, signInOrigin } from '../../functions/console-page/index.ts';
import { API_ROUTES, type ApiRouteName } from '../../functions/contracts/console-routes.ts';
import { maskContact } from '../../functions/domain/contact-mask.ts';
import { refusal } from '../../functions/domain/refusal.ts';
import { OperatorError } from '../../functions/operator/action.ts';
import type { Operations } from '../../functions/operator/operations.ts';

// The page function reads its sign-in settings when loaded.
vi.hoisted(() => {
  process.env.CONSOLE_SIGN_IN = JSON.stringify({ kind: 'local', users: [] });
});

const GROUPS = parseGroupRoles(JSON.stringify({ support: ['staff-support'], approver: ['staff-approvers'] }));
const claims = (groups: string) => ({
  'cognito:username': 'bank_sam',
  name: 'Sam Rivera',
  email: 'sam@bank.example',
  'custom:groups': groups,
});
const SAM = callerOf(claims('["staff-support"]'), GROUPS) as Caller;
const NOOR = callerOf(
  { ...claims('[staff-approvers]'), 'cognito:username': 'bank_noor', name: 'Noor', email: 'noor@bank.example' },
  GROUPS,
) as Caller;
const route = (name: ApiRouteName) => API_ROUTES.find((r) => r.name === name) as (typeof API_ROUTES)[number];

function fakeOps(overrides: Partial<Operations> = {}) {
  const ops = {
    policy: { required: new Set(), proposalMs: 86_400_000 },
    preview: vi.fn(),
    confirm: vi.fn(async () => ({ notificationId: 'e-1#SMS', channel: 'SMS', contact: '+14155550182' })),
    propose: vi.fn(async (action: string, request: { notificationId: string }, actor: { identity: unknown }) => ({
      id: 'p-20261205T000000Z-abcdef',
      action,
      target: request.notificationId,
      request,
      shown: {},
      fingerprint: 'f',
      reason: 'r',
      proposedBy: actor.identity,
      proposedAt: '2026-12-05T00:00:00.000Z',
      approveBy: '2026-12-06T00:00:00.000Z',
      state: 'PENDING',
      status: 'PENDING',
    })),
    approve: vi.fn(),
    reject: vi.fn(),
    proposals: vi.fn(async () => []),
    ...overrides,
  };
  const audit = {
    record: vi.fn(async (entry: Record<string, unknown>) => ({ key: 'audit/k.json', record: entry })),
    recordOutcome: vi.fn(async () => ({})),
  };
  const events = { read: vi.fn(async (eventId: string) => ({ eventId, notifications: [] })) };
  const ports = { proposals: { get: vi.fn(async () => undefined) }, audit, events, now: () => 0 };
  return { ports: ports as unknown as ConsoleDeps['ports'], ops: ops as unknown as Operations, fake: ops, audit };
}

describe('who the caller is', () => {
  it('is whoever the checked token names, with roles from the groups the bank put them in', () => {
    expect(SAM).toMatchObject({ principal: 'bank_sam', verifiedBy: 'IDENTITY_PROVIDER', roles: ['support'] });
    expect(SAM.can).toEqual(['read', 'reveal', 'propose']);
    expect(NOOR.can).toEqual(['read', 'reveal', 'decide']);
  });

  it('reads the groups however the provider sends them: JSON, a bracketed list, or commas', () => {
    expect(groupsIn('["a","b"]')).toEqual(['a', 'b']);
    expect(groupsIn('[a, b]')).toEqual(['a', 'b']);
    expect(groupsIn('a,b')).toEqual(['a', 'b']);
    expect(groupsIn(undefined)).toEqual([]);
  });

  it('is nobody without a principal or without a person (the e-mail four eyes compares), and has no role in no mapped group', () => {
    expect(callerOf({ name: 'Sam' }, GROUPS)).toBeUndefined();
    expect(callerOf({ ...claims('["staff-support"]'), email: '' }, GROUPS)).toBeUndefined();
    expect(callerOf(undefined, GROUPS)).toBeUndefined();
    expect(callerOf(claims('["somebody-else"]'), GROUPS)?.can).toEqual([]);
  });

  it('refuses a group mapping that leaves a role without a group', () => {
    expect(() => parseGroupRoles('{"support":["x"]}')).toThrow(/"approver" must name at least one/);
  });
});

describe('the API', () => {
  it('answers nobody without a verified caller (401), and no route to a role that may not (403)', async () => {
    const d = fakeOps();
    expect((await answerApi(route('me'), undefined, null, d)).status).toBe(401);
    const decide = await answerApi(route('decide'), SAM, '{"proposalId":"p","decision":"APPROVE","reason":"x"}', d);
    expect(decide.status).toBe(403);
    const propose = await answerApi(route('propose'), NOOR, '{"notificationId":"e-1#SMS","reason":"x"}', d);
    expect(propose.status).toBe(403);
    expect(d.fake.approve).not.toHaveBeenCalled();
    expect(d.fake.propose).not.toHaveBeenCalled();
    // Someone tried: each refused acting request is audited, as the verified caller, with its REFUSED outcome.
    expect(
      d.audit.record.mock.calls.map(([e]) => [e.action, e.step, e.target, (e.by as { principal: string }).principal]),
    ).toEqual([
      ['RESEND', 'APPROVE', 'p', 'bank_sam'],
      ['RESEND', 'PROPOSE', 'e-1#SMS', 'bank_noor'],
    ]);
    expect(d.audit.recordOutcome.mock.calls.map((c) => (c as unknown[])[1])).toEqual([
      { result: 'REFUSED', details: expect.objectContaining({ code: 'FORBIDDEN' }) },
      { result: 'REFUSED', details: expect.objectContaining({ code: 'FORBIDDEN' }) },
    ]);
    // A read is not an attempt to act: refused, not audited.
    await answerApi(route('customer'), callerOf(claims('[]'), GROUPS) as Caller, '{"userId":"u"}', d);
    expect(d.audit.record).toHaveBeenCalledTimes(2);
  });

  it('refuses an action without a reason before doing anything (400)', async () => {
    const d = fakeOps();
    const answer = await answerApi(route('reveal'), SAM, '{"notificationId":"e-1#SMS","reason":"   "}', d);
    expect(answer.status).toBe(400);
    expect(d.fake.confirm).not.toHaveBeenCalled();
  });

  it('refuses a reason of one letter or one word: a reason is a few words a colleague can read later', async () => {
    const d = fakeOps();
    for (const reason of ['x', 'ok', 'approved']) {
      const answer = await answerApi(
        route('decide'),
        NOOR,
        JSON.stringify({ proposalId: 'p', decision: 'APPROVE', reason }),
        d,
      );
      expect(answer).toMatchObject({
        status: 400,
        body: { error: { message: expect.stringContaining('a few words') } },
      });
    }
    expect(d.fake.approve).not.toHaveBeenCalled();
  });

  it('takes a reason written in a script without spaces between words (Japanese) as the few words it is', async () => {
    const d = fakeOps();
    for (const [reason, status] of [
      ['顧客から再送依頼', 200],
      ['再送', 400],
    ] as const) {
      const answer = await answerApi(route('reveal'), SAM, JSON.stringify({ notificationId: 'e-1#SMS', reason }), d);
      expect(answer.status).toBe(status);
    }
  });

  it('shows a contact in full through the audited REVEAL action, as the verified caller, with their reason', async () => {
    const d = fakeOps();
    const body = JSON.stringify({ notificationId: 'e-1#SMS', reason: 'customer on the phone', by: 'someone else' });
    const answer = await answerApi(route('reveal'), SAM, body, d);
    expect(answer).toEqual({
      status: 200,
      body: { notificationId: 'e-1#SMS', channel: 'SMS', contact: '+14155550182' },
    });
    expect(d.fake.confirm).toHaveBeenCalledWith(
      'REVEAL',
      { notificationId: 'e-1#SMS' },
      {
        identity: {
          principal: 'bank_sam',
          verifiedBy: 'IDENTITY_PROVIDER',
          person: 'sam@bank.example',
          display: 'Sam Rivera',
        },
        reason: 'customer on the phone',
      },
      undefined,
    );
  });

  it('proposes a resend (never does it at once) with the fingerprint of the preview the person saw', async () => {
    const d = fakeOps();
    const body = JSON.stringify({
      notificationId: 'e-1#SMS',
      despiteAccepted: 'm-1',
      reason: 'phone back',
      fingerprint: 'fp',
    });
    const answer = await answerApi(route('propose'), SAM, body, d);
    expect(answer.status).toBe(201);
    expect(d.fake.confirm).not.toHaveBeenCalled();
    expect(d.fake.propose).toHaveBeenCalledWith(
      'RESEND',
      { notificationId: 'e-1#SMS', despiteAccepted: 'm-1' },
      expect.objectContaining({ identity: expect.objectContaining({ principal: 'bank_sam' }), reason: 'phone back' }),
      'fp',
    );
    expect((answer.body as { proposal: { mine: boolean } }).proposal.mine).toBe(true);
  });

  it('answers a refusal with its true code: approving one’s own proposal is 403, a changed notice 409', async () => {
    const own = fakeOps({
      approve: vi.fn(async () => {
        throw new OperatorError(refusal('OWN_PROPOSAL', 'you proposed it: another person approves it'));
      }),
    });
    const body = '{"proposalId":"p-20261205T000000Z-abcdef","decision":"APPROVE","reason":"checked with the customer"}';
    // No such proposal: 404, audited with who tried.
    expect(await answerApi(route('decide'), NOOR, body, own)).toMatchObject({
      status: 404,
      body: { error: { code: 'NOT_FOUND' } },
    });
    expect(own.audit.recordOutcome).toHaveBeenCalledWith(
      'audit/k.json',
      expect.objectContaining({ result: 'REFUSED', details: expect.objectContaining({ code: 'NOT_FOUND' }) }),
      0,
    );
    const held = { id: 'p-20261205T000000Z-abcdef', action: 'RESEND', target: 'e-1#SMS' };
    vi.mocked(own.ports.proposals.get).mockResolvedValue(held as never);
    expect(await answerApi(route('decide'), NOOR, body, own)).toEqual({
      status: 403,
      body: { error: { message: 'This is your own proposal: another person approves it.', code: 'OWN_PROPOSAL' } },
    });
    const changed = fakeOps({
      approve: vi.fn(async () => {
        throw new OperatorError(refusal('CHANGED', 'changed since it was shown'));
      }),
    });
    vi.mocked(changed.ports.proposals.get).mockResolvedValue(held as never);
    expect((await answerApi(route('decide'), NOOR, body, changed)).status).toBe(409);
  });

  it('previews a resend truthfully: the refusal the action itself would give, in words without command-line flags', async () => {
    const d = fakeOps({
      preview: vi.fn(async () => ({
        ok: false as const,
        action: 'RESEND' as const,
        target: 'e-1#SMS',
        refusal: refusal('SUPPRESSED', 'e-1#SMS is SUPPRESSED (OPTED_OUT): … (lift-suppression, or … first)'),
      })),
    });
    const answer = await answerApi(route('preview'), SAM, '{"notificationId":"e-1#SMS"}', d);
    expect(answer.body).toEqual({
      ok: false,
      code: 'SUPPRESSED',
      message: expect.stringMatching(/^It would be stopped again: the customer turned these messages off/),
    });
    expect(JSON.stringify(answer.body)).not.toMatch(/lift-suppression|--/);
  });
});

describe('what support staff see', () => {
  it('an email whose delivery is delayed is still being tried: nothing offered, never “it reached the provider”', () => {
    const delayed = { channel: 'EMAIL', status: 'SENT', providerMessageId: 'm-1', deliveryStatus: 'DELAYED' };
    expect(resendChoice('e-1#EMAIL', delayed)).toEqual({
      offer: 'NONE',
      note: expect.stringContaining('still being tried by the email service'),
    });
    expect(resendChoice('e-1#EMAIL', delayed).note).not.toMatch(/It reached/);
    expect(resendChoice('e-1#EMAIL', { ...delayed, deliveryStatus: 'DELIVERED' }).note).toMatch(/It reached/);
  });

  it('a suppressed resend says which suppression: the carrier’s STOP, the customer’s choice, a bounce', () => {
    const words = (cause: string, channel: 'SMS' | 'EMAIL') =>
      refusalWords(refusal('SUPPRESSED', `e-1#${channel} would be SUPPRESSED (${cause})`, cause), channel);
    expect(words('CARRIER_OPT_OUT', 'SMS')).toMatch(/replied STOP.*texts START/);
    expect(words('OPTED_OUT', 'SMS')).toMatch(/turned off text messages.*preferences/);
    expect(words('BOUNCED', 'EMAIL')).toMatch(/bounced.*working address/);
    for (const cause of ['CARRIER_OPT_OUT', 'OPTED_OUT', 'BOUNCED']) {
      expect(words(cause, 'SMS')).not.toContain(' or the address or number is blocked');
    }
  });

  it('masks each contact point: enough to confirm it, never enough to write to it', () => {
    expect(maskContact('EMAIL', 'alex@example.com')).toBe('a•••@example.com');
    expect(maskContact('SMS', '+14155550123')).toBe('+1 ••• 0123');
    expect(maskContact('SMS', '+447700900123')).toBe('+44 ••• 0123');
    expect(
      maskContact(
        'PUSH',
        'arn:aws:sns:us-east-1:123456789012:endpoint/GCM/bank-app/9a8b7c6d-5e4f-3a2b-1c0d-e9f8a7b6c5d4',
      ),
    ).toBe('Android device •••c5d4');
    expect(maskContact('EMAIL', 'not-an-address')).toBe('•••');
    expect(maskContact('SMS', 'ERASED')).toBe('•••');
  });

  it('serves the page with a policy: no framing, scripts from itself, data only from itself and the sign-in service', () => {
    const origin = signInOrigin(
      JSON.stringify({ kind: 'cognito', tokenUrl: 'https://bank.auth.ap-northeast-1.amazoncognito.com/oauth2/token' }),
    );
    const csp = pageHeaders('text/html', origin)['content-security-policy'];
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self' https://bank.auth.ap-northeast-1.amazoncognito.com");
    expect(pageHeaders('text/html', undefined)['content-security-policy']).toContain("connect-src 'self';");
  });
});
