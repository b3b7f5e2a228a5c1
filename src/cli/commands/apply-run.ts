// `cdk8s-kruise apply`: the README's phased kubectl procedure as one command.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { escapeControl } from '../../api/quote.js';
import { UsageError } from '../../policy/usage-error.js';
import { OUTPUT_MARKER } from '../synth/output-guard.js';
import { FLUX_DIRS, Phase, SYNCED_PHASES, type SyncedPhase } from '../../policy/output-layout.js';
import { diagnoseStall, kubectlFailure, type EventFacts, type PodFacts } from './apply-diagnose.js';

export interface ApplyOptions {
  kubectl: string;
  kubeconfig?: string;
  context?: string;
  timeout: string;
  quiet?: boolean;
}

/** One apply phase: the files it applies, in order, and what to wait for afterwards. */
interface ApplyPhase {
  readonly title: string;
  readonly files: string[];
  readonly crds: string[];
  readonly workloads: Array<{ kind: string; name: string; namespace: string }>;
  /** Pre-pull phase: its ImagePullJobs are waited for until each finished (pulled or not). */
  readonly prePull: boolean;
}

const FIELD_MANAGER = 'cdk8s-kruise';

export async function apply(dir: string, opts: ApplyOptions): Promise<number> {
  const timeout = Number(opts.timeout);
  if (!/^\d{1,5}$/.test(opts.timeout.trim()) || timeout < 1)
    throw new UsageError(`--timeout must be a whole number of seconds, got "${escapeControl(opts.timeout.slice(0, 20))}"`);
  const phases = readPhases(dir);
  const say = opts.quiet ? () => {} : (msg: string) => process.stderr.write(`cdk8s-kruise: ${msg}\n`);
  const base = [...(opts.kubeconfig ? ['--kubeconfig', opts.kubeconfig] : []), ...(opts.context ? ['--context', opts.context] : [])];
  const kubectl = (args: string[], waitSeconds = 0) => run(opts.kubectl, [...base, ...args], (waitSeconds + 60) * 1000);
  const t0 = performance.now();
  const total = phases.length;
  for (const [i, phase] of phases.entries()) {
    const step = `[${i + 1}/${total}] ${phase.title}`;
    const tp = performance.now();
    say(`${step}: applying ${phase.files.length} file(s)`);
    const applied = await kubectl(['apply', '--server-side', `--field-manager=${FIELD_MANAGER}`, ...phase.files.flatMap((f) => ['-f', f])]);
    if (!applied.ok) return fail(step, kubectlFailure(applied.output).what, applied.output);
    if (phase.crds.length > 0) {
      say(`${step}: waiting for ${phase.crds.length} CRD(s) to be Established`);
      const r = await kubectl(
        ['wait', '--for', 'condition=established', `--timeout=${timeout}s`, ...phase.crds.map((n) => `crd/${n}`)],
        timeout,
      );
      if (!r.ok) return fail(step, unlessUnreachable(r.output, `CRDs not Established within ${timeout}s`), r.output);
    }
    if (phase.prePull) {
      say(`${step}: waiting for the image pulls to finish`);
      const r = await waitForPulls(kubectl, phase.files, timeout);
      if (!r.ok) return fail(step, r.what, r.output);
      if (r.failed.length > 0) say(`${step}: warning: ${r.failed.join('; ')} (the rollout pulls what is missing itself)`);
    }
    for (const w of phase.workloads) {
      say(`${step}: waiting for ${w.kind} ${w.namespace}/${w.name} to roll out`);
      const r = await kubectl(
        ['rollout', 'status', `${w.kind.toLowerCase()}/${w.name}`, '-n', w.namespace, `--timeout=${timeout}s`],
        timeout,
      );
      if (!r.ok) {
        const what = unlessUnreachable(r.output, `${w.kind} ${w.namespace}/${w.name} not rolled out within ${timeout}s`);
        return fail(step, what, `${r.output.trim()}\n${await whyStalled(kubectl, w)}`);
      }
    }
    say(`${step}: done in ${((performance.now() - tp) / 1000).toFixed(1)} s`);
  }
  say(`applied ${escapeControl(dir)} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return 0;
}

/** `what`, unless kubectl's output says it could not reach the cluster or was refused the credentials. */
function unlessUnreachable(output: string, what: string): string {
  const f = kubectlFailure(output);
  return f.kind === 'refused' ? what : f.what;
}

type Kubectl = (args: string[], waitSeconds?: number) => Promise<{ ok: boolean; output: string }>;

/** The cause of a stalled rollout, from the workload's pods and the namespace's Warning events. */
async function whyStalled(kubectl: Kubectl, w: { kind: string; name: string; namespace: string }): Promise<string> {
  const json = async <T>(args: string[]): Promise<T | undefined> => {
    const r = await kubectl([...args, '-o', 'json']);
    if (!r.ok) return undefined;
    try {
      return JSON.parse(r.output) as T;
    } catch {
      return undefined;
    }
  };
  const workload = await json<{ spec?: { selector?: { matchLabels?: Record<string, string> } } }>([
    'get',
    `${w.kind.toLowerCase()}/${w.name}`,
    '-n',
    w.namespace,
  ]);
  const labels = Object.entries(workload?.spec?.selector?.matchLabels ?? {});
  if (labels.length === 0) return 'cause: unknown (the workload or its selector could not be read)';
  const selector = labels.map(([k, v]) => `${k}=${v}`).join(',');
  const pods = await json<{ items?: PodFacts[] }>(['get', 'pods', '-n', w.namespace, '-l', selector]);
  const events = await json<{ items?: EventFacts[] }>(['get', 'events', '-n', w.namespace, '--field-selector', 'type=Warning']);
  const d = diagnoseStall(w, pods?.items ?? [], events?.items ?? []);
  return [`cause: ${d.cause}`, ...d.details.map((l) => `  ${l}`)].join('\n');
}

interface PullStatus {
  metadata?: { name?: string };
  spec?: { image?: string };
  status?: { completionTime?: string; succeeded?: number; failed?: number; desired?: number; message?: string };
}

/**
 * Waits until every ImagePullJob of `files` has finished. A job that failed on some node does not fail the apply: a
 * pre-pull only saves the rollout time, and the rollout reports an image it cannot pull itself.
 */
async function waitForPulls(
  kubectl: Kubectl,
  files: readonly string[],
  timeout: number,
): Promise<{ ok: true; failed: string[] } | { ok: false; what: string; output: string }> {
  const deadline = performance.now() + timeout * 1000;
  for (;;) {
    const r = await kubectl(['get', ...files.flatMap((f) => ['-f', f]), '-o', 'json']);
    if (!r.ok) return { ok: false, what: unlessUnreachable(r.output, 'the pre-pull jobs could not be read'), output: r.output };
    let items: PullStatus[];
    try {
      const parsed = JSON.parse(r.output) as { items?: PullStatus[] } & PullStatus;
      items = parsed.items ?? [parsed];
    } catch {
      return { ok: false, what: 'kubectl printed no JSON for the pre-pull jobs', output: r.output };
    }
    const pending = items.filter((j) => !j.status?.completionTime);
    if (pending.length === 0) {
      const failed = items.filter((j) => (j.status?.failed ?? 0) > 0);
      return {
        ok: true,
        failed: failed.map((j) => `${j.spec?.image ?? j.metadata?.name} failed to pull on ${j.status?.failed} node(s)`),
      };
    }
    if (performance.now() > deadline) {
      const names = pending.map((j) => j.metadata?.name).join(', ');
      return { ok: false, what: `image pulls not finished within ${timeout}s`, output: `still pulling: ${names}` };
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

function fail(step: string, what: string, output: string): number {
  process.stderr.write(`cdk8s-kruise: ${step}: ${what}; later phases were not applied.\n${escapeLines(output.trim())}\n`);
  return 1;
}

/**
 * kubectl's output (and the stall diagnosis) with control characters escaped line by line: its lines stay lines, as
 * escaping the whole text would join the cause, each pod and each event into one line of literal "\n"s.
 */
export function escapeLines(text: string): string {
  return text.split('\n').map(escapeControl).join('\n');
}

/** Reads the phases of a synth output: the Flux layout's directories, or the plain layout's kustomization. */
export function readPhases(dir: string): ApplyPhase[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UsageError(`${escapeControl(dir)} is not a directory`);
  if (!existsSync(path.join(dir, OUTPUT_MARKER)))
    throw new UsageError(
      `${escapeControl(dir)} was not written by cdk8s-kruise synth (no ${OUTPUT_MARKER}); apply it with kubectl instead`,
    );
  const titles: Record<SyncedPhase, string> = {
    [Phase.CRDS]: 'CRDs',
    [Phase.RUNTIME]: 'runtime',
    [Phase.PRE_PULL]: 'pre-pull',
    [Phase.APP]: 'app',
  };
  const groups = new Map<SyncedPhase, string[]>();
  const flux = Object.values(FLUX_DIRS).some((d) => existsSync(path.join(dir, d, 'kustomization.yaml')));
  for (const phase of SYNCED_PHASES) {
    const sub = flux ? path.join(dir, FLUX_DIRS[phase]) : dir;
    if (flux && !existsSync(path.join(sub, 'kustomization.yaml'))) continue;
    const files = kustomizationResources(sub).filter((f) => flux || phaseOfFile(f) === phase);
    if (files.length > 0)
      groups.set(
        phase,
        files.map((f) => path.join(sub, f)),
      );
  }
  if (groups.size === 0) throw new UsageError(`${escapeControl(dir)} lists no manifests to apply`);
  return [...groups.entries()].map(([phase, files]) => {
    const objects = files.flatMap((f) =>
      parseAllDocuments(readFileSync(f, 'utf8'))
        .map((d) => d.toJS() as { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string } } | null)
        .filter((o): o is NonNullable<typeof o> => o !== null && typeof o === 'object'),
    );
    return {
      title: titles[phase],
      files,
      crds: objects.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => o.metadata!.name!),
      workloads:
        phase === Phase.RUNTIME
          ? objects
              .filter((o) => o.apiVersion === 'apps/v1' && (o.kind === 'Deployment' || o.kind === 'DaemonSet'))
              .map((o) => ({ kind: o.kind!, name: o.metadata!.name!, namespace: o.metadata?.namespace ?? 'default' }))
          : [],
      prePull: phase === Phase.PRE_PULL,
    };
  });
}

function kustomizationResources(dir: string): string[] {
  const file = path.join(dir, 'kustomization.yaml');
  if (!existsSync(file)) throw new UsageError(`${escapeControl(file)} is missing; re-run cdk8s-kruise synth`);
  const k = parse(readFileSync(file, 'utf8')) as { resources?: unknown };
  if (!Array.isArray(k?.resources) || !k.resources.every((r) => typeof r === 'string'))
    throw new UsageError(`${escapeControl(file)} has no list of resources`);
  return k.resources as string[];
}

/** Plain layout: the file name says the phase (00- CRDs, 10- runtime, 20- app). */
function phaseOfFile(file: string): Phase {
  if (file.startsWith('00-')) return Phase.CRDS;
  if (file.startsWith('10-')) return Phase.RUNTIME;
  if (file.startsWith('15-')) return Phase.PRE_PULL;
  return Phase.APP;
}

export function run(cmd: string, args: string[], timeoutMs: number): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') {
        reject(new UsageError(`cannot run ${cmd}: not found (pass --kubectl <path>)`));
        return;
      }
      resolve({ ok: !error, output: `${stdout}${stderr}` });
    });
  });
}
