import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The rules of issue 14 on how src/ is laid out, read from the sources: imports point one way (no
 * circles, `import type` and `import()` included), context.ts takes only types from api/, config/ and
 * input/, commands get the process from the context (serve-run.ts's signal wiring aside), no file over 400
 * lines, and the declarations program.ts loads to build the command tree import nothing heavy.
 */

const SRC = resolve(import.meta.dirname, '../../src');

interface Edge {
  /** A path below src/, or a package's name as imported (`zod`, `node:fs`). */
  to: string;
  /** `import type`, or every name of the import marked `type`. */
  typeOnly: boolean;
  /** `import()`: loaded when it runs, not with the file. */
  dynamic: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The relative imports of one file (static, re-exports and import()), as paths below src/. */
function importsOf(file: string): Edge[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const edges: Edge[] = [];
  const add = (specifier: ts.Node | undefined, typeOnly: boolean, dynamic = false) => {
    if (!specifier || !ts.isStringLiteral(specifier)) return;
    if (!specifier.text.startsWith('.')) return void edges.push({ to: specifier.text, typeOnly, dynamic });
    const target = resolve(dirname(file), specifier.text).replace(/\.js$/, '.ts');
    edges.push({ to: relative(SRC, target), typeOnly, dynamic });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const named = clause?.namedBindings;
      const allNamedTypes =
        named !== undefined && ts.isNamedImports(named) && named.elements.every((e) => e.isTypeOnly);
      add(node.moduleSpecifier, clause !== undefined && (clause.isTypeOnly || (!clause.name && allNamedTypes)));
    } else if (ts.isExportDeclaration(node)) {
      add(node.moduleSpecifier, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0], false, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return edges;
}

/** Tarjan's strongly connected components: every component of more than one file is a circle. */
export function importCircles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const connect = (node: string) => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || graph.get(node)?.includes(node)) circles.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) connect(node);
  return circles;
}

const files = sourceFiles(SRC);
const imports = new Map(
  files.map((file) => [relative(SRC, file), importsOf(file).filter((edge) => edge.to.endsWith('.ts'))]),
);
const packages = new Map(
  files.map((file) => [relative(SRC, file), importsOf(file).filter((edge) => !edge.to.endsWith('.ts'))]),
);

describe('layers of src/', () => {
  it('the circle finder finds a circle of three and a file importing itself, and nothing in a tree', () => {
    const circles = importCircles(
      new Map([
        ['a', ['b']],
        ['b', ['c']],
        ['c', ['a', 'd']],
        ['d', []],
        ['e', ['e']],
      ]),
    );
    expect(circles).toEqual([['a', 'b', 'c'], ['e']]);
    expect(
      importCircles(
        new Map([
          ['a', ['b', 'c']],
          ['b', ['c']],
          ['c', []],
        ]),
      ),
    ).toEqual([]);
  });

  it('has no import circles (import type and import() count)', () => {
    const graph = new Map([...imports].map(([file, edges]) => [file, [...new Set(edges.map((e) => e.to))]]));
    expect(importCircles(graph)).toEqual([]);
  });

  it('context.ts takes nothing but types from api/, config/ and input/', () => {
    const values = (imports.get('context.ts') ?? []).filter(
      (edge) => !edge.typeOnly && /^(api|config|input)\//.test(edge.to),
    );
    expect(values).toEqual([]);
  });

  it('commands reach the process only through the context (serve-run.ts may wire signals)', () => {
    const uses = files
      .filter((file) => relative(SRC, file).startsWith('commands/'))
      .flatMap((file) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .map((line, i) => ({ where: `${relative(SRC, file)}:${i + 1}`, line }))
          .filter(({ line }) => /\bprocess\./.test(line) && !line.trimStart().startsWith('*')),
      )
      .filter(
        ({ where, line }) => !(where.startsWith('commands/serve-run.ts:') && /process\.(once|off)\('SIG/.test(line)),
      )
      .map(({ where, line }) => `${where}: ${line.trim()}`);
    expect(uses).toEqual([]);
  });

  it('the declarations program.ts loads to build the tree import nothing heavy: no zod, undici, prompts, sqlite', () => {
    const heavy = /^(zod|undici|@inquirer\/prompts|node:sqlite|libsql|ora|chalk|cli-table3|open|jq-web)(\/|$)/;
    // program.ts imports the groups' and verbs' declarations (dynamically, the ones a line names);
    // completion it imports only to run it.
    const runOnly = new Set(['commands/completion.ts']);
    const loaded = new Set<string>();
    const visit = (file: string) => {
      if (loaded.has(file)) return;
      loaded.add(file);
      for (const edge of imports.get(file) ?? []) if (!edge.typeOnly && !edge.dynamic) visit(edge.to);
    };
    visit('program.ts');
    for (const edge of imports.get('program.ts') ?? []) if (edge.dynamic && !runOnly.has(edge.to)) visit(edge.to);
    expect(loaded).toContain('commands/faces/create.ts');
    const found = [...loaded].flatMap((file) =>
      (packages.get(file) ?? [])
        .filter((edge) => !edge.typeOnly && !edge.dynamic && heavy.test(edge.to))
        .map((edge) => `${file} imports ${edge.to}`),
    );
    expect(found).toEqual([]);
  });

  it('no file is over 400 lines', () => {
    const long = files
      .map((file) => ({ file: relative(SRC, file), lines: readFileSync(file, 'utf8').split('\n').length - 1 }))
      .filter(({ lines }) => lines > 400);
    expect(long).toEqual([]);
  });
});
