import { ApiObject } from 'cdk8s';
import { IConstruct } from 'constructs';
import {
  deletionProtectedKind,
  deletionProtectionValueProblem,
  isDeletionProtectionMode,
  LABEL_DELETE_PROTECTION,
  modesOf,
} from '../src/contracts/index.js';

/** How a labelled object is protected from deletion. */
export enum DeletionProtectionMode {
  /** Never deleted while labelled: remove the label first. */
  ALWAYS = 'Always',
  /**
   * Not deleted while it still holds something: a workload while `spec.replicas > 0`, a Namespace while it has an
   * active pod or a Bound PVC, a CRD while a custom resource of it exists (that last one needs feature gate
   * DeletionProtectionForCRDCascadingGate). Services and Ingresses do not take it.
   */
  CASCADING = 'Cascading',
}

/**
 * Upstream OpenKruise's deletion protection on a Namespace, CustomResourceDefinition, Deployment, ReplicaSet,
 * StatefulSet, CloneSet, Advanced StatefulSet, UnitedDeployment, Service or Ingress: sets the label
 * `policy.kruise.io/delete-protection`, which the runtime's validating webhook reads on every DELETE of the object
 * (gate ResourcesDeletionProtection, which the app's `KruiseRuntime` then turns on and registers the webhook for).
 *
 * A kind that takes no protection, or `Cascading` on a kind that takes only `Always`, fails here with the
 * construct path.
 *
 * @example
 * DeletionProtection.of(namespace, DeletionProtectionMode.CASCADING);
 * DeletionProtection.of(service, DeletionProtectionMode.ALWAYS);
 */
export class DeletionProtection {
  /** Protects `resource` (a cdk8s-plus resource, one of our constructs or an `ApiObject`) with `mode`. */
  public static of(resource: IConstruct, mode: DeletionProtectionMode): DeletionProtection {
    return new DeletionProtection(resource, mode);
  }

  /** The label value set. */
  public readonly mode: DeletionProtectionMode;

  private constructor(resource: IConstruct, mode: DeletionProtectionMode) {
    const where = resource.node.path;
    const api = ApiObject.isApiObject(resource) ? resource : ApiObject.of(resource);
    const p = deletionProtectedKind(api.apiVersion, api.kind);
    if (!p) {
      throw new Error(
        `[${where}] deletion protection: a ${api.apiVersion} ${api.kind} cannot be protected (no runtime checks its deletions); ` +
          'protect a Namespace, CustomResourceDefinition, Deployment, ReplicaSet, StatefulSet, CloneSet, Advanced StatefulSet, UnitedDeployment, Service or Ingress',
      );
    }
    if (!isDeletionProtectionMode(mode)) {
      throw new Error(`[${where}] deletion protection: mode ${JSON.stringify(mode)} is neither Always nor Cascading`);
    }
    const problem = deletionProtectionValueProblem(p, mode);
    if (problem) throw new Error(`[${where}] deletion protection: ${problem}; use ${modesOf(p).join(' or ')}`);
    api.metadata.addLabel(LABEL_DELETE_PROTECTION, mode);
    this.mode = mode;
  }
}
