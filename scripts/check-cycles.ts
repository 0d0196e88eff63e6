// Fails when the modules under src/ import each other in a cycle (`npm run lint` runs it).
//
// Every relative import of a non-test src/**/*.ts file counts: static, re-exports, dynamic
// `import()` and `import type`. Type-only imports are erased at run time, so they cannot cause an
// initialisation hazard, but they still say "this module needs that one" and a cycle through them
// blurs the layering as much as a value import does. Tests are left out: a test may import
// whatever it exercises. The layering between folders is ESLint's job (eslint.config.js); this
// catches cycles inside a folder too, which the folder rules cannot see.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = path.join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    const isModule = entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts');
    return isModule && !entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

/** The src/ modules a file imports, resolved to absolute paths. Unresolvable specifiers fail. */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return importedFiles
    .map(({ fileName }) => fileName)
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => {
      const target = path.resolve(path.dirname(file), specifier.replace(/\.js$/, '.ts'));
      if (!existsSync(target)) throw new Error(`${rel(file)}: cannot resolve '${specifier}'`);
      return target;
    })
    .filter((target) => target.startsWith(SRC + path.sep) && target.endsWith('.ts'));
}

const rel = (file: string): string => path.relative(ROOT, file);

/** Tarjan's strongly connected components; every component with more than one module is a cycle. */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];

  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    const selfImport = graph.get(node)?.includes(node) ?? false;
    if (component.length > 1 || selfImport) found.push(component.sort());
  };

  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

const graph = new Map(sourceFiles(SRC).map((file) => [file, importsOf(file)]));
const found = cycles(graph);
if (found.length > 0) {
  console.error(`Import cycles in src/ (${found.length}):`);
  for (const component of found) {
    console.error(`- ${component.map(rel).join(', ')}`);
    for (const from of component) {
      const into = (graph.get(from) ?? []).filter((target) => component.includes(target));
      for (const target of into) console.error(`    ${rel(from)} -> ${rel(target)}`);
    }
  }
  process.exit(1);
}
console.log(`No import cycles among ${graph.size} modules in src/.`);
