import { arr, isKind, obj, podTemplates, type Obj } from '../k8s.js';
import type { Manifest, Rule, RuleFinding } from '../types.js';
import { quoteValue } from '../../api/quote.js';
import { imageReferenceProblem } from '../../contracts/validators.js';

/** The pod spec fields that hold containers, each of which names an image. */
const CONTAINER_FIELDS = ['initContainers', 'containers', 'ephemeralContainers'] as const;

interface ImageSite {
  readonly container: Obj;
  /** Pointer to the container (the image is at `${pointer}/image`, or `imagePointer` when set). */
  readonly pointer: string;
  readonly image: unknown;
  readonly imagePointer: string;
}

/** Every container image of one object: its pod templates' containers, and a SidecarSet's injected ones. */
function imageSites(m: Manifest): ImageSite[] {
  const out: ImageSite[] = [];
  const add = (containersOf: unknown, pointer: string, sidecarSet: boolean) => {
    arr(containersOf).forEach((raw, i) => {
      const container = obj(raw);
      const at = `${pointer}/${i}`;
      out.push({ container, pointer: at, image: container.image, imagePointer: `${at}/image` });
      const standby = obj(container.upgradeStrategy).hotUpgradeEmptyImage;
      if (sidecarSet && standby !== undefined) {
        out.push({ container, pointer: at, image: standby, imagePointer: `${at}/upgradeStrategy/hotUpgradeEmptyImage` });
      }
    });
  };
  for (const t of podTemplates(m)) for (const field of CONTAINER_FIELDS) add(t.spec[field], `${t.specPointer}/${field}`, false);
  if (isKind(m, 'apps.kruise.io', 'SidecarSet')) {
    const spec = obj(m.object.spec);
    for (const field of ['initContainers', 'containers'] as const) add(spec[field], `/spec/${field}`, true);
  }
  return out;
}

export const containerImageReference: Rule = {
  id: 'KRUISE-IMAGE-001',
  severity: 'error',
  title: 'Container image is not a valid image reference',
  doc:
    'Every container image of every pod template (containers, initContainers and ephemeralContainers of Pods, ' +
    'Deployments, StatefulSets, DaemonSets, ReplicaSets, Jobs, CronJobs, ReplicationControllers, PodTemplates and ' +
    "the Kruise workloads) and every SidecarSet container image (and hot-upgrade empty image) must follow the registry's " +
    'reference grammar: [registry/]repository[:tag][@digest] with a lower-case repository path (a tag may hold ' +
    'upper case; a digest is sha256/384/512 in lower-case hex). It is an error because such a container can never ' +
    'run: the API server refuses a Pod whose image has leading or trailing whitespace (it accepts it in a workload ' +
    'template, and then refuses every pod the workload creates), and the kubelet cannot parse any other malformed ' +
    'reference, such as "NGINX:1.27", so the container waits in InvalidImageName forever. An empty image is left to ' +
    'the schema and SidecarSet rules; ImagePullJob images are KRUISE-IMAGEPULLJOB-005.',
  check(manifests) {
    const out: RuleFinding[] = [];
    for (const m of manifests) {
      for (const site of imageSites(m)) {
        // A missing or empty image is another mistake, reported where the API server requires one.
        if (typeof site.image !== 'string' || site.image.trim() === '') continue;
        const problem = imageReferenceProblem(site.image);
        if (!problem) continue;
        const name = typeof site.container.name === 'string' ? ` of container ${quoteValue(site.container.name)}` : '';
        const refusal = !problem.whitespace
          ? 'the kubelet cannot parse it (InvalidImageName), so the container never starts'
          : problem.fix === site.image.trim()
            ? 'the API server refuses any pod with it'
            : 'the API server refuses any pod with it, and even trimmed the kubelet could not parse it';
        out.push({
          manifest: m,
          jsonPointer: site.imagePointer,
          message: `image ${quoteValue(site.image)}${name} is not a valid image reference: ${problem.reason}; ${refusal}`,
          hint:
            problem.fix !== undefined
              ? `Write ${quoteValue(problem.fix)}.`
              : 'Use a reference such as nginx:1.27 or registry.example.com/team/app@sha256:<digest>, with a lower-case repository.',
        });
      }
    }
    return out;
  },
};

export const IMAGE_RULES = [containerImageReference];
