// Locating the pod template inside a rendered manifest, for every owner kind we support.

/** The JSON shape of a container, as far as the pod-level features need it. */
export interface ContainerJson {
  name: string;
  env?: Array<{ name: string; value?: string; valueFrom?: unknown }>;
  restartPolicy?: string;
  [key: string]: unknown;
}

/** The JSON shape of a pod spec, as far as the pod-level features need it. */
export interface PodSpecJson {
  containers?: ContainerJson[];
  initContainers?: ContainerJson[];
  restartPolicy?: string;
  [key: string]: unknown;
}

/** A pod template located inside a manifest. */
export interface LocatedPodTemplate {
  /** Pod metadata (created on demand so annotations can be added). */
  readonly metadata: () => { annotations?: Record<string, string>; [key: string]: unknown };
  readonly spec: PodSpecJson;
  /** Replaces the pod metadata object in the manifest. */
  readonly replaceMetadata: (metadata: Record<string, unknown>) => void;
  /** Replaces the pod spec object in the manifest. */
  readonly replaceSpec: (spec: PodSpecJson) => void;
  /** JSON pointer of `spec` inside the manifest, for error messages. */
  readonly specPointer: string;
}

function child(obj: Record<string, unknown>, key: string): ReturnType<LocatedPodTemplate['metadata']> {
  if (obj[key] === undefined || obj[key] === null) obj[key] = {};
  return obj[key] as ReturnType<LocatedPodTemplate['metadata']>;
}

/** The parts of a pod template owner's manifest this module reads (untyped JSON otherwise). */
type TemplateJson = { metadata?: Record<string, unknown>; spec?: PodSpecJson };
type OwnerSpecJson = { template?: TemplateJson; jobTemplate?: { spec?: { template?: TemplateJson } } };

/**
 * Finds the pod template of a manifest: `spec` of a Pod, `spec.jobTemplate.spec.template` of
 * a CronJob, `spec.template` of everything else (Job, Deployment, StatefulSet, DaemonSet,
 * ReplicaSet, CloneSet, ...). Returns an error message when the manifest has none.
 */
export function locatePodTemplate(manifest: Record<string, unknown>): LocatedPodTemplate | string {
  const kind = String(manifest.kind);
  if (kind === 'Pod') {
    if (!manifest.spec) return 'a Pod manifest has no /spec';
    return {
      metadata: () => child(manifest, 'metadata'),
      spec: manifest.spec as PodSpecJson,
      replaceMetadata: (metadata) => {
        manifest.metadata = metadata;
      },
      replaceSpec: (spec) => {
        manifest.spec = spec;
      },
      specPointer: '/spec',
    };
  }
  const ownerSpec = manifest.spec as OwnerSpecJson | undefined;
  const template = kind === 'CronJob' ? ownerSpec?.jobTemplate?.spec?.template : ownerSpec?.template;
  const pointer = kind === 'CronJob' ? '/spec/jobTemplate/spec/template' : '/spec/template';
  if (!template?.spec) {
    return `kind ${kind} has no pod template at ${pointer}/spec (supported: Pod, CronJob, and kinds with spec.template)`;
  }
  return {
    metadata: () => child(template, 'metadata'),
    spec: template.spec,
    replaceMetadata: (metadata) => {
      template.metadata = metadata;
    },
    replaceSpec: (spec) => {
      template.spec = spec;
    },
    specPointer: `${pointer}/spec`,
  };
}
