import { ApiObject } from 'cdk8s';

/** A post-render step applied to an ApiObject's JSON manifest (mutating it in place). */
export type ManifestTransform = (manifest: Record<string, unknown>) => void;

const transforms = new WeakMap<ApiObject, ManifestTransform[]>();

/**
 * Adds a step that runs on the fully resolved manifest of `obj`, after its own `toJson()`
 * (resolvers, sanitising and JSON patches included). This is how pod-level features work on
 * any pod-template owner — a kplus workload, a CloneSet or a raw `ApiObject` — without
 * knowing how that owner builds its spec, and how native sidecars get probes that
 * cdk8s-plus-27 refuses on init containers.
 */
export function addManifestTransform(obj: ApiObject, transform: ManifestTransform): void {
  let list = transforms.get(obj);
  if (!list) {
    list = [];
    transforms.set(obj, list);
    const render = obj.toJson.bind(obj);
    const steps = list;
    obj.toJson = () => {
      const manifest = render() as Record<string, unknown>;
      for (const step of steps) step(manifest);
      return manifest;
    };
  }
  list.push(transform);
}
