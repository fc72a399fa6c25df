/**
 * Who writes policy data, read off the source: grants (roles, their permissions and
 * assignments, the legacy ACL), org and team memberships, teams and orgs only through
 * accesscontrol/policy-writer.ts, and no other module records a policy change or names a
 * fragment (the folder tree's stores tell the writer what happened through its functions). The
 * test-mode document check (policy-document-check.test.ts) proves the recorded changes are
 * right; this proves nobody else records one.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Every write of these goes through the writer. */
const WRITER_TABLES = ['roles', 'role_permissions', 'user_roles', 'team_roles', 'legacy_acl', 'connector_label_rules', 'org_members'];
/** Inserts and deletes of these go through the writer; an update of what no document reads (a team's name, a member's team permission) may not. */
const WRITER_ROWS = ['team_members', 'teams'];
const WRITER = join('src', 'accesscontrol', 'policy-writer.ts');
/** The change log and the transaction that appends to it, and the engine that reads the changes. */
const CONSUMERS = [join('src', 'db', 'policy-changes.ts'), join('src', 'db', 'transaction.ts')];
const consumes = (file: string) => CONSUMERS.includes(file) || file.startsWith(join('src', 'authz') + '/');

/** What names a policy change: recording one, the fragment type or the log's module, or a fragment of a kind only fragments have. */
const NAMES_A_CHANGE = [
  /\bpolicyChanged\b/,
  /\bPolicyFragment\b/,
  /\bOrgChange\b/,
  /db\/policy-changes(\.ts)?'/,
  /\bkind:\s*'(member|dashboard|alert_rule|legacy_acl|label_rules)'/,
  /\bkind:\s*'folders',\s*uids\b/,
  /\bkind:\s*'role',\s*uid\b/,
];

function sourceFiles(): Array<{ file: string; text: string }> {
  return readdirSync('src', { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name))
    .map((file) => ({ file, text: readFileSync(file, 'utf8') }));
}

/** Each statement (up to its `;`) that starts a query on `table` and writes (with `rowsOnly`, inserts or deletes). */
function writesTo(text: string, table: string, rowsOnly = false): string[] {
  const statements = text.split(';');
  const opens = new RegExp(`\\(\\s*'${table}(?: as \\w+)?'\\s*\\)`);
  const writes = rowsOnly ? /\.(insert|delete|del|truncate)\(/ : /\.(insert|update|delete|del|truncate)\(/;
  return statements.filter((statement) => opens.test(statement) && writes.test(statement)).map((s) => s.trim());
}

function writesOf(text: string): string[] {
  return [...WRITER_TABLES.flatMap((table) => writesTo(text, table)), ...WRITER_ROWS.flatMap((table) => writesTo(text, table, true))];
}

describe('policy writes (read off src/)', () => {
  const files = sourceFiles();

  it("only accesscontrol/policy-writer.ts writes grants, connectors' label rules, memberships and teams", () => {
    const elsewhere = files
      .filter(({ file }) => file !== WRITER)
      .flatMap(({ file, text }) => writesOf(text).map((statement) => `${file}: ${statement.slice(0, 80)}`));
    expect(elsewhere).to.deep.equal([]);
    // the scan does see writes where they are
    const writer = files.find(({ file }) => file === WRITER)!.text;
    expect([...WRITER_TABLES, ...WRITER_ROWS].filter((table) => writesTo(writer, table).length === 0)).to.deep.equal([]);
  });

  it('no module but the writer records a policy change or names a fragment', () => {
    const naming = files
      .filter(({ file }) => file !== WRITER && !consumes(file))
      .flatMap(({ file, text }) => NAMES_A_CHANGE.filter((pattern) => pattern.test(text)).map((pattern) => `${file}: ${pattern.source}`));
    expect(naming).to.deep.equal([]);
    // the scan does see them where they are: the writer records changes of every kind
    const writer = files.find(({ file }) => file === WRITER)!.text;
    const unseen = NAMES_A_CHANGE.filter((pattern) => !pattern.test(writer)).map((pattern) => pattern.source);
    expect(unseen).to.deep.equal(['\\bOrgChange\\b']);
  });

  it('the scan finds a store that records a change itself', () => {
    const planted = `import type { Tx } from '../db/transaction.ts';\nexport function moved(tx: Tx) { tx.policyChanged('o', { kind: 'dashboard', uid: 'd' }); }`;
    expect(NAMES_A_CHANGE.filter((pattern) => pattern.test(planted))).to.have.length(2);
  });
});
