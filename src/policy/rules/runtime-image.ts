import { COMMON_LABELS } from '../../install/spec.js';
import { DEFAULT_REGISTRY, IMAGE_REPOSITORY } from '../../install/image.js';
import { NAMES } from '../../contracts/names.js';
import { arr, obj } from '../k8s.js';
import type { Manifest, Rule, RuleFinding } from '../types.js';

/** The command that builds the runtime image from the installed package and pushes it (README, docs/runtime.md). */
export const IMAGE_BUILD_COMMAND = 'npx cdk8s-kruise image build --push';

/** The bundled runtime's controller-manager Deployment, as the install renders it (name and labels). */
function isBundledManager(m: Manifest): boolean {
  if (m.object.kind !== 'Deployment' || m.object.apiVersion !== 'apps/v1') return false;
  const meta = obj(m.object.metadata);
  const labels = obj(meta.labels);
  return meta.name === NAMES.managerDeployment && Object.entries(COMMON_LABELS).every(([k, v]) => labels[k] === v);
}

export const unpublishedRuntimeImage: Rule = {
  id: 'KRUISE-IMAGE-002',
  severity: 'info',
  title: 'The runtime image is the unpublished default',
  doc:
    `The bundled runtime's controller-manager Deployment runs ${DEFAULT_REGISTRY}/${IMAGE_REPOSITORY}:<version> when ` +
    'KruiseRuntime is given no image. That image is not published for every version, so a cluster may fail to pull ' +
    `it. Build the image of this version and push it to your registry with \`${IMAGE_BUILD_COMMAND} <registry>/${IMAGE_REPOSITORY}:<version>\`, ` +
    'then set RuntimeImage.bundled({ registry, digest }) or RuntimeImage.fromReference(...). A note, not a warning: ' +
    'an output that names the default on purpose (a mirror rewrites it) is not wrong.',
  check(manifests) {
    const out: RuleFinding[] = [];
    for (const m of manifests) {
      if (!isBundledManager(m)) continue;
      arr(obj(obj(obj(m.object.spec).template).spec).containers).forEach((c, i) => {
        const image = obj(c).image;
        if (typeof image !== 'string' || !image.startsWith(`${DEFAULT_REGISTRY}/${IMAGE_REPOSITORY}:`) || image.includes('@')) return;
        const tag = image.slice(image.lastIndexOf(':') + 1);
        out.push({
          manifest: m,
          jsonPointer: `/spec/template/spec/containers/${i}/image`,
          message: `the runtime image ${image} is the default, which may not be published; the cluster may not be able to pull it`,
          hint:
            `Build and push it: ${IMAGE_BUILD_COMMAND} <registry>/${IMAGE_REPOSITORY}:${tag}, then ` +
            "new KruiseRuntime(app, 'kruise', { image: RuntimeImage.bundled({ registry: '<registry>', digest: '<digest it prints>' }) }).",
        });
      });
    }
    return out;
  },
};

export const RUNTIME_IMAGE_RULES = [unpublishedRuntimeImage];
