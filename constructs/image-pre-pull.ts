import { ApiObject, App } from 'cdk8s';
import type { IConstruct } from 'constructs';
import { ANNOTATION_PRE_PULL_CHANGED_IMAGES } from '../src/contracts/keys.js';
import { POD_TEMPLATE_PATHS } from '../src/contracts/pod-templates.js';
import { groupOf } from '../src/contracts/groups.js';

/** True for an object of a named API group that owns pod templates (a workload with a rollout). */
function isWorkload(o: ApiObject): boolean {
  const group = groupOf(o.apiVersion);
  return group !== '' && POD_TEMPLATE_PATHS[group]?.[o.kind] !== undefined;
}

/** The scopes pre-pull is on in, per app. */
const SCOPES = new WeakMap<App, Set<IConstruct>>();

function annotate(scope: IConstruct): void {
  for (const c of scope.node.findAll()) {
    if (ApiObject.isApiObject(c) && isWorkload(c)) c.metadata.addAnnotation(ANNOTATION_PRE_PULL_CHANGED_IMAGES, 'true');
  }
}

function annotateAll(scopes: ReadonlySet<IConstruct>): void {
  for (const scope of scopes) annotate(scope);
}

/**
 * Pre-pull from the diff: `cdk8s-kruise synth` compares each opted-in workload with the previous output (the
 * committed `dist/`, or `--previous <dir|commit>`) and, where its container images changed, emits one ImagePullJob
 * per new image aimed at the nodes running the workload's pods, in a phase applied before the app (15-pre-pull.yaml,
 * Flux `pre-pull/`, an Argo CD Sync hook of wave -1). The rollout then finds its images on the nodes.
 *
 * Works for any workload (Deployment, StatefulSet, DaemonSet, Job, CronJob, CloneSet, Advanced StatefulSet and
 * DaemonSet, ...). The opt-in is the annotation `kruise.cdk8s.io/pre-pull-changed-images: "true"` on the workload;
 * `synth --pre-pull` turns it on for every workload. Plain `cdk8s synth` keeps the annotation and emits no job.
 */
export class ImagePrePull {
  /**
   * Pre-pull the changed images of every workload under `scope` (an App or a Chart), including workloads added
   * after this call.
   */
  public static enableIn(scope: IConstruct): void {
    // cdk8s has no hook before synthesis. The workloads under `scope` are annotated when the app's synth starts
    // (before any validation: KruiseRuntime renders the app while validating, and must see the annotation), and
    // again in a validation of `scope`, which is all a chart synthesized alone (Testing.synth) goes through.
    const root = scope.node.root;
    if (root instanceof App) {
      let scopes = SCOPES.get(root);
      if (!scopes) {
        SCOPES.set(root, (scopes = new Set()));
        const synth = root.synth.bind(root);
        const synthYaml = root.synthYaml.bind(root);
        root.synth = () => (annotateAll(scopes!), synth());
        root.synthYaml = () => (annotateAll(scopes!), synthYaml());
      }
      scopes.add(scope);
    }
    scope.node.addValidation({ validate: () => (annotate(scope), []) });
  }

  /** Pre-pull the changed images of one workload (a cdk8s-plus workload, a Kruise workload construct, an ApiObject). */
  public static enableFor(workload: IConstruct): void {
    let o: ApiObject;
    try {
      o = ApiObject.of(workload);
    } catch {
      throw new Error(`[${workload.node.path}] ImagePrePull.enableFor: not a Kubernetes object (pass a workload construct).`);
    }
    if (!isWorkload(o)) {
      throw new Error(
        `[${workload.node.path}] ImagePrePull.enableFor: ${o.kind} (${o.apiVersion}) runs no pods of its own; pass a workload such as a Deployment, StatefulSet, Job or CloneSet.`,
      );
    }
    o.metadata.addAnnotation(ANNOTATION_PRE_PULL_CHANGED_IMAGES, 'true');
  }

  private constructor() {}
}
