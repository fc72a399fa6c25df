/**
 * The documentation holds together: every relative link of README.md, docs/*.md and
 * policies/README.md names a file of the repository, every anchor names a heading of its page as
 * GitHub renders it, and the README stays a short entry into docs/.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PAGES = [
  'README.md',
  'policies/README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The page without fenced code blocks and inline code spans, where brackets are not links. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/(`+)[^`\n]*?\1/g, '');
}

/** GitHub's anchor of a heading: its text lower-cased, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  const withoutCode = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const [, heading] of withoutCode.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = heading!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, '');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

const anchorsByFile = new Map<string, Set<string>>();
function anchorsOf(file: string): Set<string> {
  if (!anchorsByFile.has(file)) anchorsByFile.set(file, anchors(fs.readFileSync(file, 'utf8')));
  return anchorsByFile.get(file)!;
}

/** Every inline link target of the page: `[text](target)` and `[text](target "title")`. */
function links(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]!);
}

describe('documentation links', () => {
  it('keeps the README short: the rest belongs to docs/', () => {
    const lines = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8').split('\n').length;
    expect(lines, 'lines of README.md').to.be.at.most(250);
  });

  it('covers the README, every page of docs/ and the policy guide', () => {
    expect(PAGES).to.include.members(['README.md', 'docs/operating.md', 'docs/api.md', 'policies/README.md']);
  });

  for (const page of PAGES) {
    it(`${page}: every relative link and anchor resolves`, () => {
      const markdown = fs.readFileSync(path.join(ROOT, page), 'utf8');
      const broken: string[] = [];
      for (const target of links(markdown)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto: leave the repository
        const [file, anchor] = target.split('#', 2) as [string, string | undefined];
        const resolved = file === '' ? path.join(ROOT, page) : path.resolve(path.dirname(path.join(ROOT, page)), decodeURIComponent(file));
        if (!resolved.startsWith(ROOT) || !fs.existsSync(resolved)) {
          broken.push(`${target}: no file ${path.relative(ROOT, resolved)}`);
          continue;
        }
        if (anchor === undefined) continue;
        if (!resolved.endsWith('.md')) {
          broken.push(`${target}: an anchor into a file that is not Markdown`);
          continue;
        }
        if (!anchorsOf(resolved).has(decodeURIComponent(anchor))) {
          broken.push(`${target}: no heading of ${path.relative(ROOT, resolved)} has the anchor #${anchor}`);
        }
      }
      expect(broken, `broken links in ${page}`).to.deep.equal([]);
    });
  }

  it('finds links, anchors and code as GitHub renders them', () => {
    const sample = [
      '# Gatehouse',
      '## The data document (one per org, built by `src/authz/document.ts`)',
      '## Ops connector (Kubernetes): plans',
      '## Ops connector (Kubernetes)',
      '## Ops connector (Kubernetes)',
      'See [plans](#ops-connector-kubernetes-plans) and [the doc](docs/api.md "API").',
      '`[not a link](nowhere.md)` in code',
      '```sh',
      '# not a heading',
      'echo "[no](link.md)"',
      '```',
    ].join('\n');
    expect([...anchors(sample)]).to.deep.equal([
      'gatehouse',
      'the-data-document-one-per-org-built-by-srcauthzdocumentts',
      'ops-connector-kubernetes-plans',
      'ops-connector-kubernetes',
      'ops-connector-kubernetes-1',
    ]);
    expect(links(sample)).to.deep.equal(['#ops-connector-kubernetes-plans', 'docs/api.md']);
  });
});
