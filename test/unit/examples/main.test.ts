import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { buildExamplesApp } from '../../../examples/main.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const distDir = path.join(repoRoot, 'dist');
const tempDirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'cdk8s-kruise-examples-'));
  tempDirs.push(dir);
  return dir;
}

/** Synthesizes examples/ in process with plain cdk8s (App.synth). */
function synthExamples(): string {
  const dir = tempDir();
  buildExamplesApp(dir).synth();
  return dir;
}

/** Runs exactly what `npm run synth` runs (the cdk8s-kruise synth command), into a temp dir. */
function synthLikeNpmRunSynth(): string {
  const out = path.join(tempDir(), 'dist');
  execFileSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'synth', '-o', out], {
    cwd: repoRoot,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return out;
}

function yamlFiles(dir: string): Map<string, string> {
  return new Map(
    readdirSync(dir, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.yaml'))
      .sort()
      .map((f) => [f, readFileSync(path.join(dir, f), 'utf8')]),
  );
}

afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

describe('examples', () => {
  it('dist/ is not stale (byte-for-byte equal to a fresh `npm run synth` of examples/)', { timeout: 180_000 }, () => {
    const fresh = yamlFiles(synthLikeNpmRunSynth());
    const committed = yamlFiles(distDir);
    const hint = 'dist/ is stale: run `npm run synth` and commit dist/';
    expect([...committed.keys()], `${hint} (file set differs)`).toEqual([...fresh.keys()]);
    for (const [file, content] of fresh) {
      expect(committed.get(file) === content, `${hint} (dist/${file} differs)`).toBe(true);
    }
  });

  it('synthesis is deterministic (two synths are byte-identical)', () => {
    const first = yamlFiles(synthExamples());
    const second = yamlFiles(synthExamples());
    expect(first.size).toBeGreaterThanOrEqual(8);
    expect([...second.entries()]).toEqual([...first.entries()]);
  });

  it('covers every seed scenario', () => {
    const all = [...yamlFiles(distDir).values()].join('\n---\n');
    expect(all).toContain('KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT\n');
    expect(all).toContain('KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE');
    expect(all).toMatch(/kind: SidecarSet\nmetadata:\n {2}name: logtail/);
    expect(all).toContain('example.io/unready-blocker');
    expect(all).toContain('example.io/block-unready: "true"');
    expect(all).toMatch(/disablePVCReuse: true\n/);
    expect(all).toContain(`kruise.io/container-exit-priority: '{"log-agent":1,"envoy":2}'`);
    expect(all).toContain('image: nginx:1.9.1');
    expect(all).toContain('io.kubernetes.image.metrics.tags: cluster=cn-shanghai');
    expect(all).toContain('io.kubernetes.image.app: foo');
    expect(all).toMatch(/kind: ContainerRecreateRequest[\s\S]*forceRecreate: true/);
    expect(all).toMatch(/restartPolicy: Always\n/);
  });

  it('native-sidecar variant: top-level chart files, same scenarios compiled to native sidecars', () => {
    const files = yamlFiles(distDir);
    expect([...files.keys()].filter((f) => f.includes('native-sidecars'))).toEqual([
      '20-app-native-sidecars-namespace.yaml',
      '20-app-native-sidecars.yaml',
    ]);
    const native = files.get('20-app-native-sidecars.yaml')!;
    const objects = parseAllDocuments(native).map((d) => d.toJS() as { kind: string; metadata: { name: string; namespace?: string } });
    expect(objects.map((o) => `${o.kind}/${o.metadata.name} in ${o.metadata.namespace}`)).toEqual([
      'Job/job-with-sidecar in native-sidecars',
      'CloneSet/app-with-exit-priority in native-sidecars',
      'Deployment/api-with-launch-order in native-sidecars',
    ]);
    // Native sidecars (restartable init containers) instead of the Kruise env/annotation contracts.
    expect(native).toMatch(/initContainers:[\s\S]*name: log-shipper[\s\S]*restartPolicy: Always\n/);
    expect(native).not.toContain('KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT');
    expect(native).not.toContain('kruise.io/container-exit-priority');
    // The launch order too: envoy a restartable init container with a startup gate, no barrier marker.
    expect(native).toContain(`kruise.cdk8s.io/launch-priority-lowered: '["envoy"]'`);
    expect(native).toMatch(/initContainers:[\s\S]*name: envoy[\s\S]*restartPolicy: Always[\s\S]*startupProbe:/);
    expect(native).not.toContain('KRUISE_CONTAINER_PRIORITY');
  });

  it('every namespace an object in dist/ uses is created by a Namespace applied before it (fresh cluster)', () => {
    const order = (parse(readFileSync(path.join(distDir, 'kustomization.yaml'), 'utf8')) as { resources: string[] }).resources;
    expect(order.length).toBeGreaterThan(2);
    const created = new Set<string>();
    const missing: string[] = [];
    for (const file of order) {
      for (const doc of parseAllDocuments(readFileSync(path.join(distDir, file), 'utf8'))) {
        const o = doc.toJS() as { kind?: string; metadata?: { name?: string; namespace?: string } } | null;
        if (!o?.kind) continue;
        if (o.kind === 'Namespace') {
          expect(o.metadata?.namespace, `Namespace ${o.metadata?.name} in ${file} is cluster-scoped`).toBeUndefined();
          created.add(o.metadata!.name!);
        } else if (o.metadata?.namespace && !created.has(o.metadata.namespace)) {
          missing.push(`${file}: ${o.kind}/${o.metadata.name} in ${o.metadata.namespace}`);
        }
      }
    }
    expect(created).toContain('native-sidecars');
    expect(missing).toEqual([]);
  });
});
