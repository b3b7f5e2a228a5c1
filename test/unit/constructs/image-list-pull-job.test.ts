import { Chart, Duration, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { describe, expect, it } from 'vitest';
import {
  ImageListPullJob,
  ImagePullJob,
  ImagePullJobCompletionPolicy,
  ImagePullJobImagePullPolicy,
  ImagePullJobNodeSelector,
  KruiseRuntime,
} from '../../../constructs/index.js';
import { validateObject } from '../../../src/api/index.js';
import { validateManifests } from '../../../src/policy/index.js';

describe('ImageListPullJob construct', () => {
  it('renders the images and the template an ImagePullJob would have, valid against the schema and the rules', () => {
    const chart = Testing.chart();
    const creds = new kplus.Secret(chart, 'creds', { metadata: { name: 'registry-cred' } });
    const props = {
      selector: ImagePullJobNodeSelector.labels(kplus.LabelSelector.of({ labels: { pool: 'web' } })),
      parallelism: 3,
      pullSecrets: [creds],
      pullPolicy: { timeout: Duration.minutes(2), backoffLimit: 1 },
      completionPolicy: ImagePullJobCompletionPolicy.always({
        activeDeadline: Duration.minutes(10),
        ttlAfterFinished: Duration.minutes(5),
      }),
      sandboxConfig: { labels: { team: 'web' } },
      imagePullPolicy: ImagePullJobImagePullPolicy.ALWAYS,
    };
    const list = new ImageListPullJob(chart, 'release', { ...props, images: ['registry.example.com/app:2.0', 'redis:7.2'] });
    const single = new ImagePullJob(chart, 'single', { ...props, image: 'redis:7.2' });
    expect(list.images).toEqual(['registry.example.com/app:2.0', 'redis:7.2']);
    const objects = Testing.synth(chart);
    const out = objects.find((o) => o.kind === 'ImageListPullJob')!;
    const job = objects.find((o) => o.kind === 'ImagePullJob')!;
    expect(out.apiVersion).toBe('apps.kruise.io/v1alpha1');
    expect(out.spec).toEqual({
      images: ['registry.example.com/app:2.0', 'redis:7.2'],
      selector: { matchLabels: { pool: 'web' } },
      parallelism: 3,
      pullSecrets: ['registry-cred'],
      pullPolicy: { timeoutSeconds: 120, backoffLimit: 1 },
      completionPolicy: { type: 'Always', activeDeadlineSeconds: 600, ttlSecondsAfterFinished: 300 },
      sandboxConfig: { labels: { team: 'web' } },
      imagePullPolicy: 'Always',
    });
    // Each ImagePullJob the runtime makes for the list gets the same template as this ImagePullJob has.
    const { images, ...template } = out.spec;
    const { image, ...jobTemplate } = job.spec;
    expect(images).toContain(image);
    expect(template).toEqual(jobTemplate);
    expect(single.image).toBe('redis:7.2');
    expect(validateObject(out).issues).toEqual([]);
    expect(validateManifests([out]).filter((f) => f.severity === 'error')).toEqual([]);
  });

  it('defaults: completion policy Always, nothing else set', () => {
    const chart = Testing.chart();
    new ImageListPullJob(chart, 'warm', { images: ['nginx:1.25'] });
    expect(Testing.synth(chart)[0]!.spec).toEqual({ images: ['nginx:1.25'], completionPolicy: { type: 'Always' } });
  });

  it.each([
    ['no image', { images: [] }, /\[test\/bad\] images: give at least one image to pull\./],
    [
      'an image twice',
      { images: ['nginx:1.25', 'redis:7.2', 'nginx:1.25'] },
      /images\[2\]: "nginx:1.25" is already images\[0\]; list each image once\./,
    ],
    ['an invalid reference', { images: ['nginx:1.25', 'nginx::1.25'] }, /images\[1\]: "nginx::1.25" is not a valid image reference/],
    ['too many images', { images: Array.from({ length: 256 }, (_, i) => `app${i}:1`) }, /256 images, at most 255; split them/],
    [
      'selector and podSelector',
      {
        images: ['nginx:1.25'],
        selector: ImagePullJobNodeSelector.names('n1'),
        podSelector: kplus.LabelSelector.of({ labels: { a: 'b' } }),
      },
      /mutually exclusive/,
    ],
    [
      'a deadline shorter than the pull timeout',
      { images: ['nginx:1.25'], completionPolicy: ImagePullJobCompletionPolicy.always({ activeDeadline: Duration.minutes(1) }) },
      /activeDeadline \(60s\) must be at least pullPolicy.timeout \(600s\)/,
    ],
  ])('refuses %s at construction', (_name, props, error) => {
    const chart = Testing.chart();
    expect(() => new ImageListPullJob(chart, 'bad', props as never)).toThrow(error);
  });

  it('an app with one gets the ImagePullJob gate and the daemon from KruiseRuntime; nothing reported as not carried out', () => {
    const app = Testing.app();
    new KruiseRuntime(app, 'kruise');
    new ImageListPullJob(new Chart(app, 'apps'), 'warm', { images: ['nginx:1.25'] });
    app.synth();
    const all = app.charts.flatMap((ch) => ch.toJson() as { kind: string; metadata: { name: string }; spec: any }[]);
    const manager = all.find((o) => o.kind === 'Deployment' && o.metadata.name === 'kruise-controller-manager')!;
    const args: string[] = manager.spec.template.spec.containers[0].args;
    expect(args.find((a) => a.startsWith('--feature-gates='))).toMatch(/ImagePullJobGate=true/);
    expect(all.some((o) => o.kind === 'DaemonSet')).toBe(true);
    expect(validateManifests(all).filter((f) => f.ruleId.startsWith('KRUISE-RUNTIME-'))).toEqual([]);
  });
});
