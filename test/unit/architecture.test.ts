// The layering, enforced: dependencies point down only, and no two files import each other in a cycle.
//
//   src/cli                          (entry points: may import anything below)
//   constructs   src/policy          (compiler)
//   src/install                      (install manifests)      src/runtime (controller-manager, daemon)
//                                                             units (controllers, webhooks, daemon) ─► control ─► core
//   src/api                          (API model)
//   src/contracts                    (facts everything stands on; imports nothing of ours)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return tsFiles(full);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [full] : [];
  });
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s+(?:type\s+)?(?:[^'"]*?\s+from\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Source files and what each imports: relative imports resolved to repository paths, packages by name. */
function importGraph(): Map<string, { files: string[]; packages: string[] }> {
  const graph = new Map<string, { files: string[]; packages: string[] }>();
  for (const file of [...tsFiles(path.join(ROOT, 'src')), ...tsFiles(path.join(ROOT, 'constructs'))]) {
    const rel = path.relative(ROOT, file);
    const text = readFileSync(file, 'utf8');
    const files: string[] = [];
    const packages: string[] = [];
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2]!;
      if (spec.startsWith('.')) files.push(path.relative(ROOT, path.resolve(path.dirname(file), spec)).replace(/\.js$/, '.ts'));
      else packages.push(spec);
    }
    graph.set(rel, { files, packages });
  }
  return graph;
}

const GRAPH = importGraph();

/** Every import edge from files under `from` to files under one of `to` (folder prefixes). */
function edges(from: string, to: readonly string[], except: (src: string, dst: string) => boolean = () => false): string[] {
  const out: string[] = [];
  for (const [src, { files }] of GRAPH) {
    if (!src.startsWith(from)) continue;
    for (const dst of files) if (to.some((t) => dst.startsWith(t)) && !except(src, dst)) out.push(`${src} -> ${dst}`);
  }
  return out;
}

/** `src/runtime/controllers/<name>/...` → `src/runtime/controllers/<name>/`. */
function unitOf(file: string, parent: string): string | undefined {
  if (!file.startsWith(parent)) return undefined;
  const name = file.slice(parent.length).split('/')[0];
  return name && !name.endsWith('.ts') ? `${parent}${name}/` : undefined;
}

describe('architecture', () => {
  it('src/contracts imports nothing of ours outside itself and no library', () => {
    expect(edges('src/contracts/', ['src/', 'constructs/'], (_s, d) => d.startsWith('src/contracts/'))).toEqual([]);
    const packages = [...GRAPH]
      .filter(([f]) => f.startsWith('src/contracts/'))
      .flatMap(([f, { packages }]) => packages.map((p) => `${f}: ${p}`));
    expect(packages).toEqual([]);
  });

  it('src/api stands only on src/contracts', () => {
    expect(edges('src/api/', ['src/install/', 'src/policy/', 'src/runtime/', 'src/cli/', 'constructs/', 'src/image/'])).toEqual([]);
  });

  it('src/install and src/runtime do not import each other', () => {
    expect(edges('src/install/', ['src/runtime/'])).toEqual([]);
    expect(edges('src/runtime/', ['src/install/'])).toEqual([]);
  });

  it('src/runtime does not import the compiler (policy, constructs) or the CLI', () => {
    expect(edges('src/runtime/', ['src/policy/', 'constructs/', 'src/cli/'])).toEqual([]);
  });

  it('a controller or webhook folder imports neither another one, nor the manager, nor the daemon', () => {
    const units = ['src/runtime/controllers/', 'src/runtime/webhooks/', 'src/runtime/daemon/'];
    const offending: string[] = [];
    for (const [src, { files }] of GRAPH) {
      const mine = units.map((u) => unitOf(src, u)).find(Boolean);
      if (!mine) continue;
      for (const dst of files) {
        if (dst.startsWith(mine)) continue;
        const other = units.map((u) => unitOf(dst, u)).find(Boolean);
        const isDaemonShared = src.startsWith('src/runtime/daemon/') && dst.startsWith('src/runtime/daemon/') && !other;
        if (other || dst.startsWith('src/runtime/manager/') || (dst.startsWith('src/runtime/daemon/') && !isDaemonShared))
          offending.push(`${src} -> ${dst}`);
      }
    }
    expect(offending).toEqual([]);
  });

  it('src/runtime/control holds agreements: it stands only on core, api and contracts, and core never reaches it', () => {
    expect(
      edges('src/runtime/control/', ['src/'], (_s, d) =>
        ['src/runtime/control/', 'src/runtime/core/', 'src/api/', 'src/contracts/'].some((ok) => d.startsWith(ok)),
      ),
    ).toEqual([]);
    expect(edges('src/runtime/core/', ['src/runtime/control/'])).toEqual([]);
    // core is the framework: no domain unit, no manager or daemon, below it.
    expect(
      edges('src/runtime/core/', ['src/runtime/controllers/', 'src/runtime/webhooks/', 'src/runtime/daemon/', 'src/runtime/manager/']),
    ).toEqual([]);
  });

  it('each file of src/runtime/control is shared by two or more runtime units', () => {
    const units = ['src/runtime/controllers/', 'src/runtime/webhooks/', 'src/runtime/daemon/'];
    const usersOf = new Map<string, Set<string>>();
    for (const [src, { files }] of GRAPH) {
      const unit = src.startsWith('src/runtime/daemon/') ? 'src/runtime/daemon/' : units.map((u) => unitOf(src, u)).find(Boolean);
      if (!unit) continue;
      // A control file a unit reaches through another control file is used by that unit too.
      const seen = new Set<string>();
      const reach = (dst: string) => {
        if (!dst.startsWith('src/runtime/control/') || seen.has(dst)) return;
        seen.add(dst);
        usersOf.set(dst, (usersOf.get(dst) ?? new Set()).add(unit));
        for (const next of GRAPH.get(dst)?.files ?? []) reach(next);
      };
      for (const dst of files) reach(dst);
    }
    const control = [...GRAPH.keys()].filter((f) => f.startsWith('src/runtime/control/'));
    expect(control.length).toBeGreaterThan(0);
    const single = control
      .filter((f) => (usersOf.get(f)?.size ?? 0) < 2)
      .map((f) => `${f}: ${[...(usersOf.get(f) ?? [])].join(', ') || 'no unit'}`);
    expect(single).toEqual([]);
  });

  it('no re-export shims: a runtime file that only re-exports another is an alias (import the original); index.ts barrels aside', () => {
    const shims = [...GRAPH.keys()].filter((f) => {
      if (!f.startsWith('src/runtime/') || f.endsWith('/index.ts')) return false;
      const code = readFileSync(path.join(ROOT, f), 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '')
        .trim();
      return code.length > 0 && code.split('\n').every((line) => /^export (?:\*|\{[^}]*\}) from ['"][^'"]+['"];?$/.test(line.trim()));
    });
    expect(shims).toEqual([]);
  });

  it('one name per unit: a controller folder is named as its controller registers, pure files are decision.ts', async () => {
    const { MANAGER_CONTROLLER_PARTS } = await import('../../src/runtime/manager/parts.js');
    const dir = path.join(ROOT, 'src/runtime/controllers');
    const folders = readdirSync(dir).filter((name) => statSync(path.join(dir, name)).isDirectory());
    expect(folders.sort()).toEqual(MANAGER_CONTROLLER_PARTS.map((p) => p.name).sort());
    // The pure half of a unit is `decision.ts` (or `<phase>-decision.ts`), never a second spelling.
    expect([...GRAPH.keys()].filter((f) => f.startsWith('src/runtime/') && /(^|[/-])decide\.ts$/.test(f))).toEqual([]);
  });

  it('nothing imports upward into the CLI; the policy engine and constructs never import the runtime', () => {
    expect(edges('', ['src/cli/'], (s) => s.startsWith('src/cli/'))).toEqual([]);
    expect(edges('src/policy/', ['src/runtime/', 'constructs/'])).toEqual([]);
    expect(edges('constructs/', ['src/runtime/', 'src/cli/', 'src/policy/'])).toEqual([]);
  });

  it('no import cycles between files', () => {
    const cycles: string[][] = [];
    // Tarjan's strongly connected components; a component of more than one file is a cycle.
    let index = 0;
    const idx = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const visit = (v: string) => {
      idx.set(v, index);
      low.set(v, index++);
      stack.push(v);
      onStack.add(v);
      for (const w of GRAPH.get(v)?.files ?? []) {
        if (!GRAPH.has(w)) continue;
        if (!idx.has(w)) {
          visit(w);
          low.set(v, Math.min(low.get(v)!, low.get(w)!));
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
      }
      if (low.get(v) === idx.get(v)) {
        const comp: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          comp.push(w);
        } while (w !== v);
        if (comp.length > 1) cycles.push(comp.sort());
      }
    };
    for (const v of GRAPH.keys()) if (!idx.has(v)) visit(v);
    expect(cycles).toEqual([]);
  });

  it('finds the imports it checks (the scan is not vacuous)', () => {
    expect(GRAPH.size).toBeGreaterThan(100);
    expect(edges('src/runtime/', ['src/contracts/']).length).toBeGreaterThan(10);
    expect(edges('src/install/', ['src/contracts/']).length).toBeGreaterThan(3);
  });
});
