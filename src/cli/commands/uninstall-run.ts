// `cdk8s-kruise uninstall`: removes what `apply` installed (runtime, CRDs), never while a Kruise object exists,
// because deleting a CRD deletes every object of its kind (a CloneSet with it, and the CloneSet's pods by GC).
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { escapeControl } from '../../api/quote.js';
import { UsageError } from '../../policy/usage-error.js';
import { escapeLines, readPhases, run } from './apply-run.js';
import { kubectlFailure } from './apply-diagnose.js';

export interface UninstallOptions {
  kubectl: string;
  kubeconfig?: string;
  context?: string;
  timeout: string;
  quiet?: boolean;
}

/**
 * Kinds the runtime keeps one of per node (NodeImage, NodePodProbe): made by its controllers, not by users, owning no
 * pods, deleted with their CRDs at no loss. What put anything into them (an ImagePullJob, a PodProbeMarker) is listed.
 */
const RUNTIME_NODE_RECORDS = new Set(['NodeImage', 'NodePodProbe']);

/** Objects listed in the refusal before it says "and N more". */
const SHOWN = 20;

export async function uninstall(dir: string, opts: UninstallOptions): Promise<number> {
  const timeout = Number(opts.timeout);
  if (!/^\d{1,5}$/.test(opts.timeout.trim()) || timeout < 1)
    throw new UsageError(`--timeout must be a whole number of seconds, got "${escapeControl(opts.timeout.slice(0, 20))}"`);
  const phases = readPhases(dir);
  const crdPhase = phases.find((p) => p.title === 'CRDs');
  const runtimePhase = phases.find((p) => p.title === 'runtime');
  if (!crdPhase && !runtimePhase) throw new UsageError(`${escapeControl(dir)} installs no CRDs and no runtime; nothing to uninstall`);
  const say = opts.quiet ? () => {} : (msg: string) => process.stderr.write(`cdk8s-kruise: ${msg}\n`);
  const base = [...(opts.kubeconfig ? ['--kubeconfig', opts.kubeconfig] : []), ...(opts.context ? ['--context', opts.context] : [])];
  const kubectl = (args: string[], waitSeconds = 0) => run(opts.kubectl, [...base, ...args], (waitSeconds + 60) * 1000);
  const crds = crdPhase ? crdKinds(crdPhase.files) : [];

  const guard = async (when: string): Promise<number | undefined> => {
    say(`${when}: looking for objects of ${crds.length} CRD(s)`);
    const found: string[] = [];
    for (const c of crds) {
      // The runtime's own per-node records never hold an uninstall.
      if (RUNTIME_NODE_RECORDS.has(c.kind)) continue;
      const r = await kubectl(['get', `${c.plural}.${c.group}`, '--all-namespaces', '--ignore-not-found', '-o', 'json']);
      if (!r.ok) {
        // A CRD that is not installed has no objects; anything else (unreachable, forbidden) stops the uninstall.
        if (/the server doesn't have a resource type|not found/i.test(r.output)) continue;
        return failed(`cannot list ${c.kind} objects: ${failure(r.output, 'kubectl get failed')}`, r.output);
      }
      const items = r.output.trim() ? ((JSON.parse(r.output) as { items?: ObjectRef[] }).items ?? []) : [];
      for (const o of items) found.push(`${c.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata?.name}`);
    }
    if (found.length === 0) return undefined;
    process.stderr.write(
      `cdk8s-kruise: refusing to uninstall: ${found.length} Kruise object(s) exist, and deleting their CRDs would delete them ` +
        `(and the pods they own). Delete them first:\n` +
        found
          .slice(0, SHOWN)
          .map((f) => `  ${escapeControl(f)}\n`)
          .join('') +
        (found.length > SHOWN ? `  … and ${found.length - SHOWN} more\n` : ''),
    );
    return 1;
  };

  const refused = await guard('[1/3] check');
  if (refused !== undefined) return refused;
  if (runtimePhase) {
    say(`[2/3] runtime: deleting ${runtimePhase.files.length} file(s)`);
    // Not waited for: the runtime's Namespace finishes terminating in the background; the CRDs do not depend on it.
    const r = await kubectl(deleteArgs(runtimePhase.files, timeout, false), timeout);
    if (!r.ok) return failed(`[2/3] runtime: ${failure(r.output, 'deletion failed')}`, r.output);
  }
  if (crdPhase) {
    // Checked again: with the runtime gone nothing stops a create between the first check and here.
    const late = await guard('[3/3] CRDs');
    if (late !== undefined) return late;
    say(`[3/3] CRDs: deleting ${crdPhase.crds.length} CRD(s)`);
    const r = await kubectl(deleteArgs(crdPhase.files, timeout, true), timeout);
    if (!r.ok) return failed(`[3/3] CRDs: ${failure(r.output, 'deletion failed')}`, r.output);
  }
  say(`uninstalled what ${escapeControl(dir)} installs`);
  return 0;
}

interface ObjectRef {
  metadata?: { name?: string; namespace?: string };
}

function deleteArgs(files: readonly string[], timeout: number, wait: boolean): string[] {
  return ['delete', '--ignore-not-found', `--wait=${wait}`, `--timeout=${timeout}s`, ...files.flatMap((f) => ['-f', f])];
}

/** What kubectl's failure was: unreachable or refused credentials said as such, else `otherwise`. */
function failure(output: string, otherwise: string): string {
  const f = kubectlFailure(output);
  return f.kind === 'refused' ? otherwise : f.what;
}

function failed(what: string, output: string): number {
  process.stderr.write(`cdk8s-kruise: ${what}\n${escapeLines(output.trim())}\n`);
  return 1;
}

/** group, plural and kind of each CRD in the files. */
function crdKinds(files: readonly string[]): Array<{ group: string; plural: string; kind: string }> {
  return files.flatMap((f) =>
    parseAllDocuments(readFileSync(f, 'utf8'))
      .map((d) => d.toJS() as { kind?: string; spec?: { group?: string; names?: { plural?: string; kind?: string } } } | null)
      .filter((o) => o?.kind === 'CustomResourceDefinition' && o.spec?.group && o.spec.names?.plural)
      .map((o) => ({ group: o!.spec!.group!, plural: o!.spec!.names!.plural!, kind: o!.spec!.names!.kind ?? o!.spec!.names!.plural! })),
  );
}
