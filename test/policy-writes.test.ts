/**
 * Who writes policy data, read off the source: grants (roles, their permissions and
 * assignments, the legacy ACL) only through accesscontrol/grants.ts, and the fragments a change
 * touched are reported by the store function that wrote it, never by a handler. The test-mode
 * document check (policy-document-check.test.ts) proves the reports are right; this proves
 * nobody else writes.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const GRANT_TABLES = ['roles', 'role_permissions', 'user_roles', 'team_roles', 'legacy_acl', 'connector_label_rules'];
const GRANTS_MODULE = join('src', 'accesscontrol', 'grants.ts');

function sourceFiles(): Array<{ file: string; text: string }> {
  return readdirSync('src', { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name))
    .map((file) => ({ file, text: readFileSync(file, 'utf8') }));
}

/** Each statement (up to its `;`) that starts a query on `table` and writes. */
function writesTo(text: string, table: string): string[] {
  const statements = text.split(';');
  const opens = new RegExp(`\\(\\s*'${table}(?: as \\w+)?'\\s*\\)`);
  return statements.filter((statement) => opens.test(statement) && /\.(insert|update|delete|del|truncate)\(/.test(statement)).map((s) => s.trim());
}

describe('policy writes (read off src/)', () => {
  const files = sourceFiles();

  it("only accesscontrol/grants.ts writes roles, permissions, assignments, the legacy ACL and connectors' label rules", () => {
    const elsewhere = files
      .filter(({ file }) => file !== GRANTS_MODULE)
      .flatMap(({ file, text }) => GRANT_TABLES.flatMap((table) => writesTo(text, table).map((statement) => `${file}: ${statement.slice(0, 80)}`)));
    expect(elsewhere).to.deep.equal([]);
    // the scan does see writes where they are
    const grants = files.find(({ file }) => file === GRANTS_MODULE)!.text;
    expect(GRANT_TABLES.filter((table) => writesTo(grants, table).length === 0)).to.deep.equal([]);
  });

  it('only stores (and grants.ts) report policy fragments: no handler names one', () => {
    const reporters = files.filter(({ text }) => /\.policyChanged\(/.test(text)).map(({ file }) => file);
    const handlers = reporters.filter((file) => !/(^|[./])store\.ts$/.test(file) && file !== GRANTS_MODULE && !file.startsWith(join('src', 'db')));
    expect(handlers).to.deep.equal([]);
    expect(reporters.length).to.be.greaterThan(5);
  });
});
