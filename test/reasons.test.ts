/**
 * The policy's reasons are data; src/authz/reasons.ts words them, and explain hides the names in
 * them an asker may not read by their fields (policies/README.md, "Reasons").
 */
import { expect } from 'chai';
import { redactDecision, resourceProblem } from '../src/accesscontrol/policy-explain.ts';
import { REASON_KINDS, renderReason, type Reason } from '../src/authz/reasons.ts';

describe('reasons', () => {
  it('words every kind', () => {
    const cases: Array<[Reason, string]> = [
      [{ kind: 'grant', role: 'basic:viewer', action: 'dashboards:read', scope: 'dashboards:*' }, 'role basic:viewer grants dashboards:read on dashboards:*'],
      [{ kind: 'grant', role: 'basic:editor', action: 'alert.rules:create' }, 'role basic:editor grants alert.rules:create on some scope'],
      [{ kind: 'acl', level: 2, scope: 'folders:uid:f1', principal: 'team:t1' }, 'legacy ACL grants level 2 on folders:uid:f1 to team:t1'],
      [{ kind: 'rule', rule: 'self', action: 'users:read' }, 'a subject may users:read on itself'],
      [{ kind: 'rule', rule: 'member', action: 'orgs:read' }, 'a member may orgs:read the org it is in'],
      [{ kind: 'rule', rule: 'server-admin', action: 'orgs:write' }, 'a server admin may orgs:write on every org'],
      [{ kind: 'rule', rule: 'setup-open', action: 'settings:write' }, 'setup is open: anyone may settings:write until the first user exists'],
      [{ kind: 'missing', action: 'teams:delete', scopes: ['teams:id:1', 'teams:*', '*'] }, 'no role grants teams:delete on teams:id:1, teams:*, *'],
      [{ kind: 'missing', action: 'teams:create' }, 'no role grants teams:create on any scope'],
      [
        { kind: 'unmet', need: 'requirement', action: 'connectors:query', scope: 'connectors:uid:c1' },
        'no role grants connectors:query on connectors:uid:c1, which the request requires',
      ],
      [{ kind: 'unmet', need: 'destination', action: 'dashboards:create' }, 'no role grants dashboards:create on the destination of no known shape'],
      [{ kind: 'unmet', need: 'delegation', action: 'teams:write', scope: 'teams:*' }, 'you do not hold teams:write on teams:*, which the change grants'],
      [{ kind: 'unmet', need: 'chat', action: 'chat:use' }, 'no role grants chat:use, which a chat-driven request needs'],
      [{ kind: 'unmet-more', need: 'requirement', count: 3 }, 'and 3 more requirements not granted'],
      [{ kind: 'server-only', action: 'roles:seed' }, 'only a server admin may roles:seed'],
      [{ kind: 'service-account-only', action: 'scim:write' }, 'only a service account may scim:write'],
      [{ kind: 'subject', problem: 'unknown-kind', subjectKind: 'robot' }, 'unknown subject kind robot'],
      [{ kind: 'subject', problem: 'disabled' }, 'subject is disabled'],
      [{ kind: 'org', problem: 'not-member', org: 'org_a' }, 'not a member of org org_a'],
      [{ kind: 'org', problem: 'pinned-elsewhere', org: 'org_a' }, 'the token is pinned to org org_a, and the request names another'],
      [
        { kind: 'chat', problem: 'tool', agentType: 'investigator', tool: 'users_delete' },
        'chat: tool users_delete is not allowed for agent type investigator',
      ],
      [{ kind: 'author', must: 'differ' }, 'the subject is the author, and the author may not do this'],
      [{ kind: 'protected' }, "only a server admin may change a server admin's org role or membership"],
      [{ kind: 'input', field: 'resource', resourceKind: 'bananas' }, 'unknown resource kind bananas'],
      [{ kind: 'input' }, 'the request could not be evaluated'],
      [{ kind: 'active-org', via: 'membership', org: 'org_a' }, 'a member of org org_a'],
      [{ kind: 'error' }, 'policy evaluation failed'],
    ];
    for (const [reason, text] of cases) expect(renderReason(reason), JSON.stringify(reason)).to.equal(text);
    expect(new Set(cases.map(([reason]) => reason.kind))).to.deep.equal(new Set(REASON_KINDS));
  });

  it('hides by field what the asker may not read: roles, ACL teams and users, named scopes', async () => {
    const decision = {
      allow: true,
      reasons: [
        { kind: 'acl', level: 1, scope: 'folders:uid:secret', principal: 'team:t9' },
        { kind: 'acl', level: 1, scope: 'dashboards:uid:d1', principal: 'user:usr_other' },
        { kind: 'acl', level: 1, scope: 'dashboards:uid:d1', principal: 'role:Viewer' },
        { kind: 'grant', role: 'custom:secret', action: 'dashboards:read', scope: 'folders:uid:open' },
        { kind: 'grant', role: 'basic:viewer', action: 'dashboards:read', scope: 'dashboards:*' },
      ] satisfies Reason[],
    };
    const asked: string[] = [];
    const answer = await redactDecision(decision, 'usr_subject', { kind: 'dashboards', uid: 'd1' }, async (action, resources) => {
      asked.push(action);
      // the asker reads the folder "open" and nothing else it is asked about
      return resources.filter((resource) => 'scope' in resource && resource.scope === 'folders:uid:open');
    });
    expect(answer.reasonDetails).to.deep.equal([
      { kind: 'acl', level: 1, scope: 'folders:uid:(hidden)', principal: 'team:(hidden)' },
      { kind: 'acl', level: 1, scope: 'dashboards:uid:d1', principal: 'user:(hidden)' },
      { kind: 'acl', level: 1, scope: 'dashboards:uid:d1', principal: 'role:Viewer' },
      { kind: 'grant', role: '(hidden)', action: 'dashboards:read', scope: 'folders:uid:open' },
      { kind: 'grant', role: 'basic:viewer', action: 'dashboards:read', scope: 'dashboards:*' },
    ]);
    expect(answer.reasons).to.deep.equal(answer.reasonDetails.map(renderReason));
    expect(asked.sort()).to.deep.equal(['folders:read', 'roles:read', 'teams:read']);
  });

  it('tells a malformed resource from a deny by the reason, not its words', () => {
    expect(resourceProblem({ allow: false, reasons: [{ kind: 'input', field: 'resource', resourceKind: 'bananas' }] })).to.equal(
      'unknown resource kind bananas',
    );
    expect(resourceProblem({ allow: false, reasons: [{ kind: 'missing', action: 'teams:read' }] })).to.equal(undefined);
  });
});
