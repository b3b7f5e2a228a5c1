// README.md's "A short tour" is one program: its code blocks, in order, run as the `main.ts` of a cdk8s app and
// synthesize output the rules accept. Here against the sources (a cdk8s-plus-27 app, as the README says to
// import there); test/e2e/package-consumers.test.ts type-checks and synthesizes it as written, from the packed
// package, in the app `cdk8s init typescript-app` creates.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadAll } from 'js-yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { validateManifests } from '../../src/index.js';
import { readmeTour } from '../harness/readme-tour.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const requireFromRepo = createRequire(path.join(repoRoot, 'package.json'));
const work = mkdtempSync(path.join(tmpdir(), 'cdk8s-kruise-readme-tour-'));

afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The tour with its imports pointed at this repository: the constructs' sources and the packages they use. */
function againstSources(program: string): string {
  return program.replace(/from '([^']+)'/g, (_m, spec: string) => {
    if (spec === 'cdk8s-kruise/constructs/plus-33') return `from '${pathToFileURL(path.join(repoRoot, 'constructs/index.ts')).href}'`;
    const pkg = spec === 'cdk8s-plus-33' ? 'cdk8s-plus-27' : spec;
    return `from '${pathToFileURL(requireFromRepo.resolve(pkg)).href}'`;
  });
}

interface Container {
  name: string;
  image?: string;
  env?: { name: string; value?: string }[];
  restartPolicy?: string;
}
interface Metadata {
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: Metadata;
  spec?: {
    template?: { metadata: Metadata; spec: { containers: Container[]; initContainers?: Container[] } };
    selector?: unknown;
    image?: string;
    podName?: string;
  };
}

describe('the README tour', () => {
  it('joins the blocks of its section; a block after a skip marker is left out, with its reason', () => {
    const readme = [
      '## A short tour',
      '```ts',
      'const a = 1;',
      '```',
      '<!-- tour: skip (an alternative to the block above) -->',
      '',
      '```ts',
      'const a = 2;',
      '```',
      '```sh',
      'npm run synth',
      '```',
      '## Next',
      '```ts',
      'const b = 3;',
      '```',
    ].join('\n');
    expect(readmeTour(readme)).toEqual({ program: 'const a = 1;\n', blocks: 1, skipped: ['an alternative to the block above'] });
  });

  it('imports what `cdk8s init typescript-app` installs and skips no block', () => {
    const tour = readmeTour();
    expect(tour.skipped).toEqual([]);
    expect(tour.blocks).toBeGreaterThanOrEqual(10);
    expect(tour.program).toContain("import * as kplus from 'cdk8s-plus-33';");
    expect(tour.program).toContain("} from 'cdk8s-kruise/constructs/plus-33';");
    expect(tour.program.trimEnd().endsWith('app.synth();')).toBe(true);
  });

  it('runs as one program and synthesizes what each section describes, with no rule failing', () => {
    const main = path.join(work, 'main.mts');
    writeFileSync(main, againstSources(readmeTour().program));
    const outdir = path.join(work, 'dist');
    const run = spawnSync(process.execPath, ['--import', 'tsx', main], {
      cwd: repoRoot,
      env: { ...process.env, CDK8S_OUTDIR: outdir },
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const objects = readdirSync(outdir)
      .filter((f) => f.endsWith('.yaml'))
      .flatMap((f) => loadAll(readFileSync(path.join(outdir, f), 'utf8')) as KubeObject[]);
    expect(validateManifests(objects).filter((f) => f.severity !== 'info')).toEqual([]);

    const find = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name.startsWith(name));
    const template = (kind: string, name: string) => {
      const found = find(kind, name)?.spec?.template;
      if (!found) throw new Error(`no ${kind} ${name}* with a pod template in the output`);
      return found;
    };
    // Job sidecar termination and launch order on the Job.
    const job = template('Job', 'my-app-job');
    expect(job.metadata.annotations?.['apps.kruise.io/container-launch-priority']).toBe('Ordered');
    expect(job.spec.containers.map((c) => c.name)).toEqual(['main', 'envoy', 'log-shipper']);
    // Exit and launch priority on the Deployment.
    const api = template('Deployment', 'my-app-api');
    expect(api.metadata.annotations?.['kruise.io/container-exit-priority']).toBe('{"log-agent":1,"envoy":2}');
    expect(api.spec.containers.find((c) => c.name === 'envoy')?.env).toContainEqual({ name: 'KRUISE_CONTAINER_PRIORITY', value: '10' });
    // The chart at Kubernetes 1.29 gets a native sidecar.
    expect(template('Job', 'batch-report').spec.initContainers).toMatchObject([{ name: 'proxy', restartPolicy: 'Always' }]);
    // The Kruise kinds, and the SidecarSet selects the CloneSet's pods.
    expect(template('CloneSet', 'my-app-web').metadata.labels?.app).toBe('webserver');
    expect(find('SidecarSet', 'my-app-logtail')?.spec?.selector).toEqual({ matchLabels: { app: 'webserver' } });
    expect(find('ImagePullJob', 'my-app-nginx')?.spec?.image).toBe('nginx:1.9.1');
    expect(find('ContainerRecreateRequest', 'my-app-restart')?.spec?.podName).toBe('web-0');
    // The runtime, with the tour's props.
    expect(template('Deployment', 'kruise-controller-manager').spec.containers[0]?.image).toMatch(
      /^registry\.example\.com\/platform\/cdk8s-kruise:[^@]+@sha256:e3b0c442/,
    );
    expect(find('DaemonSet', 'kruise-daemon')).toBeDefined();
    expect(objects.some((o) => o.kind === 'Certificate' && o.apiVersion.startsWith('cert-manager.io/'))).toBe(true);
  });
});
