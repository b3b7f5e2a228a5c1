import { ApiObject } from 'cdk8s';
import { IConstruct } from 'constructs';
import { nativeSidecarFactsOf, SidecarStrategy } from '../sidecar-strategy.js';
import {
  ANNOTATION_CONTAINER_EXIT_PRIORITY,
  ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE,
  ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT,
  ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE,
  ANNOTATION_CONTAINER_LAUNCH_PRIORITY,
  ENV_CONTAINER_PRIORITY,
  LAUNCH_PRIORITY_ORDERED,
  checkExitPriority,
  formatExitPriority,
} from '../../src/api/pod-contracts.js';
import {
  formatExitPriorityPatterns,
  formatTerminateSidecars,
  matchesContainer,
  type ContainerMatch,
  type ExitPriorityPattern,
  type TerminatedSidecarPattern,
} from '../../src/api/container-patterns.js';
import {
  ANNOTATION_CONTAINER_EXIT_PRIORITY_PATTERNS,
  ANNOTATION_LAUNCH_PRIORITY_LOWERED,
  ANNOTATION_TERMINATE_SIDECARS,
} from '../../src/contracts/keys.js';
import {
  decideLaunchLowering,
  launchPrioritiesOf,
  startupProbeFromReadiness,
  type LaunchMechanismValue,
  type ProbeJson,
} from '../../src/api/launch-lowering.js';
import { addManifestTransform } from './render-hooks.js';
import { ContainerJson, locatePodTemplate, type LocatedPodTemplate } from './pod-template-json.js';

/** One container marked for termination when the Job's main containers finish. */
export interface SidecarTerminationDecl {
  readonly quickExitImage?: string;
  readonly ignoreExitCode: boolean;
}

/** Everything declared about one pod template. */
export interface PodFeatureDecls {
  readonly sidecars: ReadonlyMap<string, SidecarTerminationDecl>;
  readonly exitPriority: ReadonlyMap<string, number>;
  /** Launch priorities by container (env KRUISE_CONTAINER_PRIORITY). */
  readonly launchPriority?: ReadonlyMap<string, number>;
  /** Start in spec order (annotation apps.kruise.io/container-launch-priority: Ordered). */
  readonly launchOrdered?: boolean;
  /** Sidecars declared by name or pattern (annotation kruise.cdk8s.io/terminate-sidecars), matched by the runtime. */
  readonly injectedSidecars?: readonly TerminatedSidecarPattern[];
  /** Exit priorities by name or pattern (annotation kruise.cdk8s.io/container-exit-priority-patterns). */
  readonly exitPriorityPatterns?: readonly ExitPriorityPattern[];
  /** How the launch order is carried out (default auto). */
  readonly launchMechanism?: LaunchMechanismValue;
}

/** What the app says about native sidecars beyond the strategy (see nativeSidecarFactsOf). */
export interface NativeSidecarContext {
  /** Kubernetes >= 1.29 is known, or the native strategy is forced. */
  readonly nativeAvailable: boolean;
  /** The contexts behind it, for messages. */
  readonly versionText: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Throws when `name` cannot be a container name. */
export function checkContainerName(name: string, where: string): void {
  if (typeof name !== 'string' || name.length > 63 || !DNS_LABEL.test(name)) {
    throw new Error(
      `[${where}] ${JSON.stringify(name)} is not a valid container name ` +
        '(a DNS-1123 label: lower-case alphanumerics and "-", at most 63 characters).',
    );
  }
}

function setEnv(container: ContainerJson, name: string, value: string): void {
  const env = container.env ?? [];
  const existing = env.findIndex((e) => e.name === name);
  if (existing >= 0) env[existing] = { name, value };
  else env.push({ name, value });
  container.env = env;
}

/** A copy of `obj` with sorted keys, keeping output as canonical as cdk8s's own (no `delete`, which deoptimises objects). */
function sortedKeys<T extends Record<string, unknown>>(obj: T): T {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(obj).sort()) out[key] = obj[key];
  return out as T;
}

/**
 * Compiles the declared pod-level features into `manifest` (in place), for `strategy`.
 * `path` is the owning construct's path, used in every error. Pure apart from the mutation.
 */
export function compilePodFeatures(
  manifest: Record<string, unknown>,
  decls: PodFeatureDecls,
  strategy: SidecarStrategy,
  path: string,
  native: NativeSidecarContext = {
    nativeAvailable: strategy === SidecarStrategy.NATIVE,
    versionText: `the sidecar strategy is ${strategy}`,
  },
): void {
  const launch = decls.launchPriority ?? new Map<string, number>();
  const injected = decls.injectedSidecars ?? [];
  const priorityPatterns = decls.exitPriorityPatterns ?? [];
  if (
    decls.sidecars.size === 0 &&
    decls.exitPriority.size === 0 &&
    launch.size === 0 &&
    !decls.launchOrdered &&
    injected.length === 0 &&
    priorityPatterns.length === 0
  )
    return;
  const fail = (message: string, pointer: string): never => {
    throw new Error(`[${path}] ${message} (at ${pointer})`);
  };
  const located = locatePodTemplate(manifest);
  if (typeof located === 'string') return fail(located, '/spec');
  const { spec, specPointer } = located;
  const containers = spec.containers ?? [];
  const names = containers.map((c) => c.name);

  // A name a pattern declares may belong to a container another webhook adds after synth: not refused here.
  const coveredBy = (patterns: readonly { readonly match: ContainerMatch }[], name: string) =>
    patterns.some((p) => matchesContainer(p.match, { name }));
  if (decls.sidecars.size > 0 || injected.length > 0) {
    const policy = spec.restartPolicy ?? 'Always';
    if (policy !== 'Never' && policy !== 'OnFailure') {
      fail(
        `Job sidecar termination needs restartPolicy Never or OnFailure, but the pod template has ${policy}` +
          `${spec.restartPolicy === undefined ? ' (the Kubernetes default when unset)' : ''}. ` +
          'Fix: set restartPolicy to Never or OnFailure, or remove the sidecar termination',
        `${specPointer}/restartPolicy`,
      );
    }
  }
  if (decls.exitPriority.size > 0) {
    // Same words as `validate` and the refusing pod webhook (one checker in the API model).
    const unknown = checkExitPriority({
      metadata: { annotations: { [ANNOTATION_CONTAINER_EXIT_PRIORITY]: formatExitPriority(Object.fromEntries(decls.exitPriority)) } },
      spec: { containers },
    }).find((f) => f.kind === 'unknown-container');
    if (unknown && [...decls.exitPriority.keys()].some((n) => !names.includes(n) && !coveredBy(priorityPatterns, n))) {
      const name = [...decls.exitPriority.keys()].find((n) => !names.includes(n));
      const isInit = (spec.initContainers ?? []).some((c) => c.name === name);
      fail(
        `${unknown.message}` +
          (isInit ? ` ("${name}" is an init container; only spec.containers entries can have an exit priority)` : '') +
          `. Fix: ${unknown.hint}`,
        `${specPointer}/containers`,
      );
    }
  }
  const declared = [...decls.sidecars.keys(), ...decls.exitPriority.keys(), ...launch.keys()];
  for (const name of new Set(declared)) {
    if (!names.includes(name) && !coveredBy(injected, name) && !coveredBy(priorityPatterns, name)) {
      const isInit = (spec.initContainers ?? []).some((c) => c.name === name);
      fail(
        `container "${name}" does not exist; the pod template's containers are: ${names.join(', ') || '(none)'}` +
          (isInit ? ` ("${name}" is an init container; only spec.containers entries can be sidecars or have an exit priority)` : '') +
          '. Fix: add the container before synth or correct the name',
        `${specPointer}/containers`,
      );
    }
  }
  const priorityOf = (name: string): number => decls.exitPriority.get(name) ?? 0;
  const isSidecar = (name: string): boolean => decls.sidecars.has(name) || priorityOf(name) > 0;
  const byPattern = (c: ContainerJson): boolean =>
    injected.some((p) => matchesContainer(p.match, c)) || priorityPatterns.some((p) => p.priority > 0 && matchesContainer(p.match, c));
  compilePatterns(located, injected, priorityPatterns);

  // Launch priority: native sidecars where the order and the cluster allow it, upstream's barrier otherwise.
  const exitPriorities = new Map(decls.exitPriority);
  for (const c of containers) {
    const pattern = priorityPatterns.find((p) => matchesContainer(p.match, c));
    if (pattern && !exitPriorities.has(c.name)) exitPriorities.set(c.name, pattern.priority);
  }
  const lowering = decideLaunchLowering({
    containers: names,
    ordered: decls.launchOrdered === true,
    priorities: launch,
    mechanism: decls.launchMechanism ?? 'auto',
    strategyNative: strategy === SidecarStrategy.NATIVE,
    nativeAvailable: native.nativeAvailable,
    versionText: native.versionText,
    ...(spec.restartPolicy === undefined ? {} : { restartPolicy: spec.restartPolicy }),
    jobSidecars: new Set(
      names.filter(
        (n) =>
          decls.sidecars.has(n) ||
          injected.some((p) =>
            matchesContainer(
              p.match,
              containers.find((c) => c.name === n)!,
            ),
          ),
      ),
    ),
    exitPriority: exitPriorities,
  });
  if (lowering.kind === 'error') fail(`launch priority: ${lowering.message}. Fix: ${lowering.fix}`, `${specPointer}/containers`);
  const lowered = lowering.kind === 'native' ? lowering.sidecars : [];
  const loweredContainers = lowered.map((n) => lowerForLaunch(containers.find((c) => c.name === n)!));
  if (lowered.length > 0) {
    const metadata = located.metadata();
    const hadAnnotations = metadata.annotations !== undefined;
    metadata.annotations = sortedKeys({ ...(metadata.annotations ?? {}), [ANNOTATION_LAUNCH_PRIORITY_LOWERED]: JSON.stringify(lowered) });
    if (!hadAnnotations) located.replaceMetadata(sortedKeys(metadata));
  }

  if (decls.sidecars.size === 0 && decls.exitPriority.size === 0) {
    if ((injected.length > 0 || priorityPatterns.length > 0) && containers.length > 0 && containers.every(byPattern)) {
      fail(
        `no main container would remain: every container (${names.join(', ')}) matches a declared sidecar pattern, and the ` +
          'runtime ignores a declaration that leaves no main container. Fix: narrow the pattern',
        `${specPointer}/containers`,
      );
    }
    if (lowered.length > 0) moveToInit(located, containers, lowered, loweredContainers);
    else compileLaunchPriority(located, containers, decls);
    return;
  }
  if (!containers.some((c) => !isSidecar(c.name) && !byPattern(c))) {
    fail(
      `no main container would remain: every container (${names.join(', ')}) is a terminated sidecar or has ` +
        'an exit priority above 0. Fix: leave at least one main container undeclared (or at priority 0)',
      `${specPointer}/containers`,
    );
  }

  if (strategy === SidecarStrategy.NATIVE && lowered.length === 0 && lowering.kind === 'barrier') {
    // Job sidecars and exit-priority containers become native sidecars, which start before every regular container,
    // whatever the barrier says; a launch order that wants one of them after a regular container cannot hold.
    const levels = launchPrioritiesOf({ containers: names, ordered: decls.launchOrdered === true, priorities: launch });
    const launchOf = new Map(names.map((n, i) => [n, levels[i]!]));
    const moved = names.filter((n) => isSidecar(n));
    for (const s of moved) {
      const before = names.find((r) => !isSidecar(r) && launchOf.get(r)! > launchOf.get(s)!);
      if (before === undefined) continue;
      fail(
        `launch priority: "${s}" becomes a native sidecar (a Job sidecar or an exit priority above 0, sidecar strategy native), ` +
          `which starts before every regular container, but its launch priority (${launchOf.get(s)}) is below "${before}"'s ` +
          `(${launchOf.get(before)}). Fix: give "${s}" a launch priority at least as high as the regular containers', or remove ` +
          'its launch priority',
        `${specPointer}/containers`,
      );
    }
  }
  if (lowered.length === 0) compileLaunchPriority(located, containers, decls);
  if (strategy === SidecarStrategy.NATIVE) {
    // Native sidecars stop after the main containers, in reverse declaration order, so the
    // container that must exit last (highest priority) is declared first. Launch-lowered containers come first
    // (they start first); the decision checked that their exit priorities allow it. A barrier priority is read on
    // regular containers only, so a container moved to initContainers does not keep one.
    const sidecars = containers
      .filter((c) => isSidecar(c.name) && !lowered.includes(c.name))
      .map((c, index) => ({ c, index }))
      .sort((a, b) => priorityOf(b.c.name) - priorityOf(a.c.name) || a.index - b.index)
      .map(({ c }) => withoutLaunchEnv(sortedKeys({ ...c, restartPolicy: 'Always' })));
    if (sidecars.length === 0 && lowered.length === 0) return;
    spec.containers = containers.filter((c) => !isSidecar(c.name) && !lowered.includes(c.name));
    spec.initContainers = [...(spec.initContainers ?? []), ...loweredContainers, ...sidecars];
    located.replaceSpec(sortedKeys(spec));
    return;
  }
  // Kruise markers: the decision kept Job sidecar and exit-priority markers off the lowered containers.
  if (lowered.length > 0) {
    moveToInit(located, containers, lowered, loweredContainers);
    compileKruiseMarkers(located, spec.containers!, decls, specPointer, fail);
    return;
  }
  compileKruiseMarkers(located, containers, decls, specPointer, fail);
}

/** Job sidecar env markers and the exit-priority annotation (the Kruise strategy), on `containers` in place. */
function compileKruiseMarkers(
  located: LocatedPodTemplate,
  containers: ContainerJson[],
  decls: PodFeatureDecls,
  specPointer: string,
  fail: (message: string, pointer: string) => never,
): void {
  const { spec } = located;

  if (decls.exitPriority.size > 0) {
    // The runtime gives each exit level a share of the grace period; one that cannot fit them fails here, at synth.
    const grace = typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : undefined;
    const problem = checkExitPriority({
      metadata: { annotations: { [ANNOTATION_CONTAINER_EXIT_PRIORITY]: formatExitPriority(Object.fromEntries(decls.exitPriority)) } },
      spec: { containers, ...(grace === undefined ? {} : { terminationGracePeriodSeconds: grace }) },
    }).find((f) => f.kind === 'grace');
    if (problem) fail(`${problem.message}. Fix: ${problem.hint}`, `${specPointer}${problem.jsonPointer.replace(/^\/spec/, '')}`);
  }

  containers.forEach((container, index) => {
    const decl = decls.sidecars.get(container.name);
    if (!decl) return;
    if (decl.quickExitImage !== undefined) {
      setEnv(container, ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE, decl.quickExitImage);
    } else {
      setEnv(container, ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT, 'true');
      if (decl.ignoreExitCode) setEnv(container, ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE, 'true');
    }
    containers[index] = sortedKeys(container);
  });
  if (decls.exitPriority.size > 0) {
    const metadata = located.metadata();
    const hadAnnotations = metadata.annotations !== undefined;
    metadata.annotations = sortedKeys({
      ...(metadata.annotations ?? {}),
      [ANNOTATION_CONTAINER_EXIT_PRIORITY]: formatExitPriority(Object.fromEntries(decls.exitPriority)),
    });
    // cdk8s sorts keys; a newly added "annotations" belongs before "labels".
    if (!hadAnnotations) located.replaceMetadata(sortedKeys(metadata));
  }
}

/** `container` without env KRUISE_CONTAINER_PRIORITY (and without an env list left empty). */
function withoutLaunchEnv(container: ContainerJson): ContainerJson {
  if (!(container.env ?? []).some((e) => e.name === ENV_CONTAINER_PRIORITY)) return container;
  const out: ContainerJson = { ...container };
  const env = (container.env ?? []).filter((e) => e.name !== ENV_CONTAINER_PRIORITY);
  if (env.length > 0) out.env = env;
  else delete out.env;
  return out;
}

/** A container made a native sidecar for its launch order: restartable, its start gated as the barrier gated it. */
function lowerForLaunch(container: ContainerJson): ContainerJson {
  const out: ContainerJson = withoutLaunchEnv({ ...container, restartPolicy: 'Always' });
  // The barrier released the next level once this container was ready, so its readiness check is the gate; the
  // kubelet gates a native sidecar on its startupProbe only, which therefore gives way to one derived from readiness
  // (cdk8s-plus gives every container with a port a TCP startupProbe of its own). Without readiness, a startupProbe
  // stays the gate, and without either the container counts as started once it runs, as it counted as ready.
  const gate = startupProbeFromReadiness(container.readinessProbe as ProbeJson | undefined);
  if (gate) out.startupProbe = gate;
  return sortedKeys(out);
}

/** Moves the lowered containers (start order) to the end of initContainers; the others stay, in place. */
function moveToInit(located: LocatedPodTemplate, containers: ContainerJson[], lowered: readonly string[], moved: ContainerJson[]): void {
  const { spec } = located;
  spec.containers = containers.filter((c) => !lowered.includes(c.name));
  spec.initContainers = [...(spec.initContainers ?? []), ...moved];
  located.replaceSpec(sortedKeys(spec));
}

/**
 * The declarations by name or pattern, as annotations the runtime reads on the live pod, whatever the sidecar strategy:
 * the containers they mean may not exist before other webhooks add them, so there is nothing to move or mark here.
 */
function compilePatterns(
  located: LocatedPodTemplate,
  injected: readonly TerminatedSidecarPattern[],
  priorityPatterns: readonly ExitPriorityPattern[],
): void {
  if (injected.length === 0 && priorityPatterns.length === 0) return;
  const metadata = located.metadata();
  const hadAnnotations = metadata.annotations !== undefined;
  metadata.annotations = sortedKeys({
    ...(metadata.annotations ?? {}),
    ...(injected.length > 0 ? { [ANNOTATION_TERMINATE_SIDECARS]: formatTerminateSidecars(injected) } : {}),
    ...(priorityPatterns.length > 0 ? { [ANNOTATION_CONTAINER_EXIT_PRIORITY_PATTERNS]: formatExitPriorityPatterns(priorityPatterns) } : {}),
  });
  if (!hadAnnotations) located.replaceMetadata(sortedKeys(metadata));
}

/** Launch priority: the Ordered annotation, or KRUISE_CONTAINER_PRIORITY on the containers (upstream's contract). */
function compileLaunchPriority(located: LocatedPodTemplate, containers: ContainerJson[], decls: PodFeatureDecls): void {
  containers.forEach((container, index) => {
    const p = decls.launchPriority?.get(container.name);
    if (p === undefined) return;
    setEnv(container, ENV_CONTAINER_PRIORITY, String(p));
    containers[index] = sortedKeys(container);
  });
  if (!decls.launchOrdered) return;
  const metadata = located.metadata();
  const hadAnnotations = metadata.annotations !== undefined;
  metadata.annotations = sortedKeys({ ...(metadata.annotations ?? {}), [ANNOTATION_CONTAINER_LAUNCH_PRIORITY]: LAUNCH_PRIORITY_ORDERED });
  if (!hadAnnotations) located.replaceMetadata(sortedKeys(metadata));
}

/** The live declarations of one pod-template owner, compiled when its ApiObject renders. */
export class PodFeatures implements PodFeatureDecls {
  private static readonly registry = new WeakMap<ApiObject, PodFeatures>();

  /** The features of `owner`'s pod template (one instance per underlying ApiObject). */
  public static of(owner: IConstruct): PodFeatures {
    const apiObject = ApiObject.isApiObject(owner) ? owner : ApiObject.of(owner);
    let features = PodFeatures.registry.get(apiObject);
    if (!features) {
      features = new PodFeatures(apiObject, owner);
      PodFeatures.registry.set(apiObject, features);
    }
    return features;
  }

  public readonly sidecars = new Map<string, SidecarTerminationDecl>();
  public readonly exitPriority = new Map<string, number>();
  public readonly launchPriority = new Map<string, number>();
  public launchOrdered = false;
  public launchMechanism?: LaunchMechanismValue;
  public readonly injectedSidecars: TerminatedSidecarPattern[] = [];
  public readonly exitPriorityPatterns: ExitPriorityPattern[] = [];

  public readonly path: string;

  private constructor(apiObject: ApiObject, owner: IConstruct) {
    this.path = owner.node.path;
    addManifestTransform(apiObject, (manifest) => {
      const facts = nativeSidecarFactsOf(apiObject);
      compilePodFeatures(manifest, this, facts.strategy, this.path, facts);
    });
    // Also checked in cdk8s's validation phase, which runs for every construct before anything renders and
    // reports all failures together: one synth then names every invalid construct, not only the first.
    owner.node.addValidation({
      validate: () => {
        try {
          apiObject.toJson();
          return [];
        } catch (e) {
          const message = e instanceof Error ? e.message : String(e);
          // cdk8s prefixes each message with the construct path already.
          return [message.startsWith(`[${this.path}] `) ? message.slice(this.path.length + 3) : message];
        }
      },
    });
  }
}
