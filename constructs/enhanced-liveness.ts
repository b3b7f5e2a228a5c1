import { ApiObject } from 'cdk8s';
import { IConstruct } from 'constructs';
import { ANNOTATION_USING_ENHANCED_LIVENESS } from '../src/contracts/keys.js';
import { checkContainerName } from './internal/pod-features.js';
import type { NamedContainer } from './internal/plus-objects.js';
import { addManifestTransform } from './internal/render-hooks.js';
import { locatePodTemplate } from './internal/pod-template-json.js';

/**
 * Liveness restarts within a budget, on any pod-template owner (cdk8s-plus workload, CloneSet, raw `ApiObject`): the
 * named containers keep their liveness probe as declared, but the bundled runtime runs it on its node daemon instead
 * of the kubelet, and restarts a failing container only while the pod's disruption budget allows (its
 * PodUnavailableBudget, else a PodDisruptionBudget selecting it, else its CloneSet's or Deployment's maxUnavailable,
 * else one at a time), so a failure shared by every pod (a dependency down) cannot restart them all at once.
 *
 * Compiles to upstream's pod annotation `apps.kruise.io/using-enhanced-liveness: "true"`. The annotation is pod-wide:
 * the runtime's pod webhook moves the liveness probe of every container, so every container with a liveness probe
 * must be named here (the synth refuses a pod where one is left out, and a named container without a probe). The
 * upstream (`openkruise`) target refuses it at synth: upstream's webhook removes the probes and nothing restarts a
 * container whose probe fails.
 *
 * @example
 * EnhancedLiveness.of(cloneSet).enable(app);
 */
export class EnhancedLiveness {
  private static readonly registry = new WeakMap<ApiObject, EnhancedLiveness>();

  /** The enhanced liveness declarations of `owner`'s pod template. */
  public static of(owner: IConstruct): EnhancedLiveness {
    const apiObject = ApiObject.isApiObject(owner) ? owner : ApiObject.of(owner);
    let e = EnhancedLiveness.registry.get(apiObject);
    if (!e) {
      e = new EnhancedLiveness(apiObject, owner.node.path);
      EnhancedLiveness.registry.set(apiObject, e);
    }
    return e;
  }

  private readonly names = new Set<string>();

  private constructor(
    apiObject: ApiObject,
    private readonly path: string,
  ) {
    addManifestTransform(apiObject, (manifest) => this.compile(manifest));
  }

  /** Has the runtime run `container`'s liveness probe within the pod's budget (by name or container object). */
  public enable(container: string | NamedContainer): this {
    const name = typeof container === 'string' ? container : container.name;
    checkContainerName(name, this.path);
    this.names.add(name);
    return this;
  }

  /** The containers named so far. */
  public get containers(): string[] {
    return [...this.names];
  }

  private compile(manifest: Record<string, unknown>): void {
    if (this.names.size === 0) return;
    const fail = (message: string, pointer: string): never => {
      throw new Error(`[${this.path}] enhanced liveness: ${message} (at ${pointer})`);
    };
    const located = locatePodTemplate(manifest);
    if (typeof located === 'string') return fail(located, '/spec');
    const containers = located.spec.containers ?? [];
    const names = containers.map((c) => c.name);
    for (const name of this.names) {
      const i = names.indexOf(name);
      if (i < 0)
        fail(
          `container "${name}" does not exist; the pod template's containers are: ${names.join(', ') || '(none)'}. Fix: add the container before synth or correct the name`,
          `${located.specPointer}/containers`,
        );
      if (!containers[i]!.livenessProbe)
        fail(
          `container "${name}" declares no livenessProbe, so there is nothing for the runtime to run. Fix: give it a liveness probe (cdk8s-plus: liveness) or leave it out`,
          `${located.specPointer}/containers/${i}`,
        );
    }
    const left = containers.findIndex((c) => !!c.livenessProbe && !this.names.has(c.name));
    if (left >= 0)
      fail(
        `container "${containers[left]!.name}" has a livenessProbe too, and the annotation moves the probes of every container of the pod. ` +
          `Fix: EnhancedLiveness.of(...).enable("${containers[left]!.name}") as well, or remove its liveness probe`,
        `${located.specPointer}/containers/${left}/livenessProbe`,
      );
    const metadata = located.metadata();
    metadata.annotations = { ...(metadata.annotations ?? {}), [ANNOTATION_USING_ENHANCED_LIVENESS]: 'true' };
  }
}
