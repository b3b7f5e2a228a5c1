import type { ApiObject, Size } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import type { Construct } from 'constructs';
import { dns1123LabelError } from '../../src/contracts/validators.js';

/**
 * What the scalable Kruise workload constructs (CloneSet, AdvancedStatefulSet) share beyond cdk8s-plus's `Workload`:
 * claim templates, the ports of a Service over their pods, and the autoscaler's target.
 */

/** A claim template as the workloads take it (`volumeMode` only where the construct offers it). */
export interface ClaimTemplate {
  readonly name: string;
  readonly storage: Size;
  readonly accessModes?: kplus.PersistentVolumeAccessMode[];
  readonly storageClassName?: string;
  readonly volumeMode?: kplus.PersistentVolumeMode;
}

/**
 * The claim templates of a workload whose controller gives each pod its own claims: each is mounted through a volume
 * of its name, which the controller supplies per pod, so the rendered pod template leaves those volumes out.
 */
export class ClaimTemplates<T extends ClaimTemplate> {
  private readonly byName = new Map<string, T>();

  public constructor(private readonly owner: Construct) {}

  /** Adds a template (its name unique and a DNS-1123 label); returns the volume to mount it through. */
  public add(template: T): kplus.Volume {
    const where = `[${this.owner.node.path}]`;
    if (this.byName.has(template.name)) throw new Error(`${where} volumeClaimTemplate "${template.name}" already exists.`);
    if (dns1123LabelError(template.name) !== undefined) {
      throw new Error(`${where} volumeClaimTemplate name ${JSON.stringify(template.name)} is not a DNS-1123 label.`);
    }
    this.byName.set(template.name, template);
    const claim = kplus.PersistentVolumeClaim.fromClaimName(this.owner, `ClaimTemplate-${template.name}`, template.name);
    return kplus.Volume.fromPersistentVolumeClaim(this.owner, `ClaimTemplateVolume-${template.name}`, claim, { name: template.name });
  }

  /** The templates, in the order added (a copy). */
  public get all(): T[] {
    return [...this.byName.values()];
  }

  /** Drops the templates' volumes from a rendered pod spec. */
  public stripVolumes(podSpec: { volumes?: Array<{ readonly name: string }> }): void {
    if (this.byName.size > 0 && Array.isArray(podSpec.volumes)) {
      const kept = podSpec.volumes.filter((v) => !this.byName.has(v.name));
      podSpec.volumes = kept.length > 0 ? kept : undefined;
    }
  }

  /** The spec's `volumeClaimTemplates`, or undefined without any. */
  public toKube() {
    if (this.byName.size === 0) return undefined;
    return this.all.map((t) => ({
      metadata: { name: t.name },
      spec: {
        accessModes: t.accessModes ?? [kplus.PersistentVolumeAccessMode.READ_WRITE_ONCE],
        resources: { requests: { storage: t.storage.asString() } },
        storageClassName: t.storageClassName,
        volumeMode: t.volumeMode,
      },
    }));
  }
}

/**
 * The ports a Service over the workload's pods exposes, as `Deployment.exposeViaService` picks them: the given ones,
 * else every container port; none at all is an error. `exposed` lists the container port numbers.
 */
export function servicePorts(
  owner: Construct & { readonly containers: readonly kplus.Container[] },
  options: kplus.DeploymentExposeViaServiceOptions,
): { ports: kplus.ServicePort[]; exposed: number[] } {
  const containerPorts = owner.containers.flatMap((c) => c.ports);
  const ports = options.ports ?? containerPorts.map((p) => ({ port: p.number, targetPort: p.number, protocol: p.protocol, name: p.name }));
  if (ports.length === 0) {
    throw new Error(`[${owner.node.path}] exposeViaService: no ports to expose; pass ports, or give a container portNumber/ports.`);
  }
  return { ports, exposed: containerPorts.map((p) => p.number) };
}

/** The target a HorizontalPodAutoscaler scales (`replicas` as the user gave it, undefined when defaulted). */
export function scalingTarget(
  apiObject: ApiObject,
  name: string,
  containers: kplus.Container[],
  replicas: number | undefined,
): kplus.ScalingTarget {
  return { kind: apiObject.kind, apiVersion: apiObject.apiVersion, name, containers, replicas };
}
