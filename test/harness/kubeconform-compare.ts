// Does `cdk8s-kruise validate` report everything kubeconform reports? Compares the two JSON reports: each error
// kubeconform gives for a resource (kind, name, apiVersion) at a JSON pointer must match one of our findings on the
// same resource at that pointer or below it; kubeconform's "additional properties 'a', 'b' not allowed" at P names
// the fields, so it needs a finding at P/a and one at P/b. A resource kubeconform could not validate at all (status
// error: no schema, unreadable) needs any finding of ours on it or on its file's input.
import type { KubeconformResource } from './kubeconform.js';

/** The parts of our JSON report the comparison reads. */
export interface OurReport {
  readonly summary: Record<string, number>;
  readonly findings: ReadonlyArray<{
    readonly ruleId: string;
    readonly file?: string;
    readonly resource: { readonly apiVersion?: string; readonly kind: string; readonly name: string };
    readonly jsonPointer: string;
  }>;
}

/** One kubeconform error with no matching finding of ours. */
export interface Uncovered {
  readonly resource: string;
  readonly path: string;
  readonly msg: string;
}

const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** kubeconform's errors (counted one per named field) and those our report has no finding for. */
export function uncoveredKubeconformFindings(
  ours: OurReport,
  theirs: { readonly resources: readonly KubeconformResource[] },
): { total: number; uncovered: Uncovered[] } {
  const byResource = new Map<string, string[]>();
  const inputErrors = new Set<string>();
  for (const f of ours.findings) {
    if (f.ruleId === 'KRUISE-INPUT-001' && f.file) inputErrors.add(f.file);
    const key = `${f.resource.apiVersion ?? ''}|${f.resource.kind}|${f.resource.name}`;
    let list = byResource.get(key);
    if (!list) byResource.set(key, (list = []));
    list.push(f.jsonPointer);
  }
  const uncovered: Uncovered[] = [];
  let total = 0;
  for (const r of theirs.resources) {
    if (r.status === 'statusValid' || r.status === 'statusSkipped' || r.status === 'statusEmpty') continue;
    const key = `${r.version}|${r.kind}|${r.name}`;
    const pointers = byResource.get(key) ?? [];
    const resource = `${r.kind} ${r.name} (${r.version})`;
    const errors = r.validationErrors ?? [];
    if (errors.length === 0) {
      total++;
      if (pointers.length === 0 && !inputErrors.has(r.filename)) uncovered.push({ resource, path: '', msg: r.msg });
      continue;
    }
    for (const e of errors) {
      const fields = /^additional properties (.+) not allowed$/
        .exec(e.msg)?.[1]
        ?.match(/'[^']*'/g)
        ?.map((q) => q.slice(1, -1));
      const expected = fields ? fields.map((k) => `${e.path === '/' ? '' : e.path}/${escapePointer(k)}`) : [e.path === '/' ? '' : e.path];
      for (const want of expected) {
        total++;
        if (!pointers.some((p) => p === want || p.startsWith(`${want}/`))) uncovered.push({ resource, path: want, msg: e.msg });
      }
    }
  }
  return { total, uncovered };
}
