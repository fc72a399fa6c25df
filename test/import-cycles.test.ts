/**
 * No circle of imports in src/: a module never reaches itself through its imports, type imports
 * included (they tie the layers as much as the others do). The layers' direction itself is
 * ESLint's (eslint.config.js); this finds the circles inside a layer and any it misses.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const SRC = resolve(import.meta.dirname, '../src');

/** Every module of src/ with the modules of src/ it imports (static, dynamic and type imports alike). */
function importGraph(): Map<string, string[]> {
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(join(SRC, file), 'utf8'), true, true);
    const imported = importedFiles
      .map(({ fileName }) => fileName)
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) => relative(SRC, resolve(SRC, dirname(file), specifier)));
    graph.set(file, imported);
  }
  return graph;
}

/** The circles of the graph: each strongly connected set of more than one module, or a module importing itself (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  const order = new Map<string, number>();
  const lowest = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (module: string): void => {
    order.set(module, order.size);
    lowest.set(module, order.get(module)!);
    stack.push(module);
    onStack.add(module);
    for (const next of graph.get(module) ?? []) {
      if (!graph.has(next)) continue;
      if (!order.has(next)) {
        visit(next);
        lowest.set(module, Math.min(lowest.get(module)!, lowest.get(next)!));
      } else if (onStack.has(next)) {
        lowest.set(module, Math.min(lowest.get(module)!, order.get(next)!));
      }
    }
    if (lowest.get(module) !== order.get(module)) return;
    const members: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      members.push(member);
    } while (member !== module);
    if (members.length > 1 || graph.get(module)!.includes(module)) found.push(members.sort());
  };
  for (const module of graph.keys()) if (!order.has(module)) visit(module);
  return found;
}

describe('imports of src/', () => {
  it('form no circle', () => {
    const graph = importGraph();
    expect(graph.size).to.be.greaterThan(100);
    expect(circles(graph)).to.deep.equal([]);
  });

  it('a circle is found, a type import closing it too', () => {
    const graph = new Map([
      ['http/route.ts', ['identity/sessions.ts', 'errors.ts']],
      ['identity/sessions.ts', ['services.ts']],
      ['services.ts', ['http/route.ts']],
      ['errors.ts', []],
    ]);
    expect(circles(graph)).to.deep.equal([['http/route.ts', 'identity/sessions.ts', 'services.ts']]);
    const { importedFiles } = ts.preProcessFile("import type { Services } from '../services.ts';\nexport type { X } from './x.ts';", true, true);
    expect(importedFiles.map(({ fileName }) => fileName)).to.deep.equal(['../services.ts', './x.ts']);
  });
});
