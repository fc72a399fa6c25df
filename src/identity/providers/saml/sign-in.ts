/**
 * What a verified SAML assertion signs in, by the rules of external-accounts.ts: the user linked
 * to its NameID (auth module `saml`); else, with SAML_ALLOW_EMAIL_LINKING, the account holding
 * the asserted email (the identity provider is the operator's own, trusted to vouch for its
 * users' emails) when nothing else guards it; else a new user, Viewer of the default org.
 * Disabled users and service accounts are refused. With SAML_ATTRIBUTE_MAPPING_GROUPS the
 * asserted groups decide the user's teams in the default org at every login: it joins the
 * teams named like a group and leaves the others (teams are not created). The login completes as
 * every login does (login-completion.ts), in one transaction with the audit entries.
 */
import { recordAudit, type Actor } from '../../../audit/writer.ts';
import type { SamlAttributeMapping } from '../../../config.ts';
import type { Tx } from '../../../db/transaction.ts';
import { DEFAULT_ORG_ID } from '../../../orgs/store.ts';
import type { Services } from '../../../services.ts';
import { revokeTeamAdmin } from '../../../teams/team-admins.ts';
import { teamAuditTarget } from '../../../teams/team-target.ts';
import { deleteTeamMember, findTeamByName, findTeamsOfUserInOrg, insertTeamMember, TEAM_MEMBER } from '../../../teams/store.ts';
import { accountToJoinByEmail, checkExplicitLink, recordLinkAdded, signUpExternal, type ExternalProvider } from '../external-accounts.ts';
import { findMembershipsOfUser, findUserById, type UserRow } from '../../users.store.ts';
import type { SamlAssertion } from './response.ts';
import { findSamlLinkedUserId, insertSamlLink, touchSamlLink, SAML_AUTH_MODULE } from './store.ts';
import { SamlRefusal } from './xml.ts';

const NEW_USER_ROLE = 'Viewer';
const MAX_GROUPS = 500;
const REFUSED = 'SAML login failed: this account cannot sign in';

/** C0 and C1 controls, DEL and the bidirectional controls: refused in names and emails elsewhere (http/schemas.ts). */
function isUnsafeCharacter(char: string): boolean {
  const code = char.codePointAt(0)!;
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x61c ||
    code === 0x200e ||
    code === 0x200f ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}
const safeText = (value: string) =>
  [...value]
    .filter((char) => !isUnsafeCharacter(char))
    .join('')
    .trim();
/** Logins are plain ASCII (http/schemas.ts). */
const asLogin = (value: string) => value.toLowerCase().replace(/[^a-z0-9._@+-]/g, '');

export interface SamlProfile {
  nameId: string;
  login: string;
  email: string | null;
  name: string;
  /** Undefined when team sync is off. */
  groups?: string[];
}

/** The user fields of an assertion, by the attribute mapping. */
export function profileOf(assertion: SamlAssertion, mapping: SamlAttributeMapping): SamlProfile {
  const first = (attribute: string) => {
    const value = attribute === 'NameID' ? assertion.nameId : assertion.attributes.get(attribute)?.[0];
    return value ? safeText(value) || null : null;
  };
  const email = first(mapping.email)?.toLowerCase() ?? null;
  const login = asLogin(first(mapping.login) ?? '').slice(0, 150) || asLogin(assertion.nameId).slice(0, 150) || 'saml-user';
  const groups = mapping.groups ? [...new Set(assertion.attributes.get(mapping.groups) ?? [])].slice(0, MAX_GROUPS) : undefined;
  return {
    nameId: assertion.nameId,
    login,
    email: email && email.length <= 190 && /^[^@\s]+@[^@\s]+$/.test(email) ? email : null,
    name: (first(mapping.name) ?? login).slice(0, 190),
    ...(groups && { groups }),
  };
}

const SAML_PROVIDER = (allowEmailLinking: boolean): ExternalProvider => ({
  authModule: SAML_AUTH_MODULE,
  label: 'SAML',
  allowEmailLinking,
  orgId: DEFAULT_ORG_ID,
});

async function resolveUser(tx: Tx, services: Services, actor: Actor, profile: SamlProfile, now: number): Promise<{ user: UserRow; linked: boolean }> {
  const linkedId = await findSamlLinkedUserId(tx.db, profile.nameId);
  if (linkedId) {
    await touchSamlLink(tx.db, profile.nameId, now);
    return { user: (await findUserById(tx.db, linkedId))!, linked: true };
  }
  const provider = SAML_PROVIDER(services.config.saml?.allowEmailLinking ?? false);
  const joined = await accountToJoinByEmail(tx, provider, profile.email);
  const user =
    joined ??
    (await signUpExternal(
      tx,
      services.config,
      actor,
      provider,
      { login: profile.login, email: profile.email, name: profile.name, org: { id: DEFAULT_ORG_ID, role: NEW_USER_ROLE } },
      now,
    ));
  await insertSamlLink(tx.db, user.id, profile.nameId, now);
  if (joined) await recordLinkAdded(tx, actor, provider, user, 'email', now);
  return { user, linked: false };
}

/**
 * Ties the asserted NameID to the signed-in user `userId` as a further login (the explicit link
 * flow, started by that user after proving who they are). The NameID must be nobody else's.
 */
export async function linkSaml(services: Services, actor: Actor, nameId: string, userId: string): Promise<void> {
  const now = services.clock.now();
  await services.transact(async (tx) => {
    const provider = SAML_PROVIDER(services.config.saml?.allowEmailLinking ?? false);
    if (await checkExplicitLink(tx, provider, userId, { issuer: '', subject: nameId })) return;
    await insertSamlLink(tx.db, userId, nameId, now);
    await recordLinkAdded(tx, actor, provider, (await findUserById(tx.db, userId))!, 'signed-in user', now);
  });
}

/** Joins the teams of the default org named by the groups and leaves the others. */
async function syncTeams(tx: Tx, actor: Actor, user: UserRow, groups: string[], now: number): Promise<void> {
  const isMember = (await findMembershipsOfUser(tx.db, user.id)).some((membership) => membership.orgId === DEFAULT_ORG_ID);
  if (!isMember) return;
  const current = await findTeamsOfUserInOrg(tx.db, DEFAULT_ORG_ID, user.id);
  const wanted = new Set(groups);
  const audit = (action: string, team: { id: string; name: string; org_id: string; email: string }) =>
    recordAudit(
      tx.db,
      actor,
      { action, orgId: DEFAULT_ORG_ID, target: teamAuditTarget(team), metadata: { userId: user.id, login: user.login, via: SAML_AUTH_MODULE } },
      now,
    );
  for (const team of current) {
    if (wanted.has(team.name)) continue;
    await deleteTeamMember(tx, team, user.id);
    await revokeTeamAdmin(tx, DEFAULT_ORG_ID, team.id, user.id);
    await audit('team.member_removed', team);
  }
  const joined = new Set(current.map((team) => team.name));
  for (const name of wanted) {
    if (joined.has(name)) continue;
    const team = await findTeamByName(tx.db, DEFAULT_ORG_ID, name);
    if (!team) continue;
    await insertTeamMember(tx, team, user.id, TEAM_MEMBER, now);
    await audit('team.member_added', team);
  }
}

/**
 * Who the profile signs in as, in the login's transaction (login-completion.ts), with its teams
 * brought up to date; a SamlRefusal says why nobody does.
 */
export function samlLoginUser(services: Services, actor: Actor, profile: SamlProfile): (tx: Tx, now: number) => Promise<UserRow> {
  return async (tx, now) => {
    const { user } = await resolveUser(tx, services, actor, profile, now);
    if (user.is_service_account) throw new SamlRefusal('service account', REFUSED);
    if (user.is_disabled) throw new SamlRefusal('disabled user', REFUSED);
    const asUser: Actor = { ...actor, type: 'user', id: user.id, name: user.login };
    if (profile.groups) await syncTeams(tx, asUser, user, profile.groups, now);
    return user;
  };
}
