// The JSON Schemas the package ships (lib/schemas/<version>/, written by the package build's buildSchemas) used
// the way the README tells kubeconform users to: one -schema-location with kubeconform's file-name template, strict,
// over dist/. Every object of a kind the compiler models is found and valid; a typo in a Kruise and in a core kind
// is reported at its path; kinds the package has no schema for are left to kubeconform's other locations.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSchemas } from '../../scripts/build-package.js';
import { schemaFiles, schemaFileNameOf, SCHEMA_SET_VERSION } from '../../src/api/schema-files.js';
import { findKubeconform, runKubeconform } from '../harness/kubeconform.js';
import { repoRoot } from './runtime/support.js';

let work: string;
let schemaDir: string;
const dist = path.join(repoRoot, 'dist');
const shipped = new Set(schemaFiles().map((f) => f.file));

function distFiles(): string[] {
  return readdirSync(dist, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name) && e.name !== 'kustomization.yaml')
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

beforeAll(() => {
  work = mkdtempSync(path.join(tmpdir(), 'cdk8s-kruise-schemas-'));
  schemaDir = buildSchemas(work);
});

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('shipped JSON Schemas with kubeconform', () => {
  it(`are written under ${SCHEMA_SET_VERSION} with kubeconform's names, one per kind`, () => {
    expect(readdirSync(schemaDir).sort()).toEqual([...shipped].sort());
    expect(shipped).toContain('cloneset-apps-v1alpha1.json');
    expect(shipped).toContain('deployment-apps-v1.json');
  });

  it('accept every object of dist/ whose kind they cover, and leave the other kinds to other locations', () => {
    const files = distFiles();
    const objects = files.flatMap((f) =>
      parseAllDocuments(readFileSync(f, 'utf8'))
        .map((d) => d.toJS() as { apiVersion?: string; kind?: string } | null)
        .filter((o): o is { apiVersion: string; kind: string } => !!o?.apiVersion && !!o.kind),
    );
    const covered = objects.filter((o) => shipped.has(schemaFileNameOf(o.apiVersion, o.kind)));
    expect(covered.length).toBeGreaterThan(10);
    // Kruise kinds and core kinds alike.
    expect(covered.some((o) => o.apiVersion === 'apps.kruise.io/v1alpha1')).toBe(true);
    expect(covered.some((o) => o.apiVersion === 'apps/v1')).toBe(true);
    const report = runKubeconform(findKubeconform(), schemaDir, files);
    // kubeconform reports every resource it did not find valid: here only the kinds with no shipped schema.
    expect(report.filter((r) => r.status !== 'statusError' || !/could not find schema/.test(r.msg))).toEqual([]);
    const missing = new Set(report.map((r) => `${r.version} ${r.kind}`));
    for (const o of covered) expect(missing.has(`${o.apiVersion} ${o.kind}`), `${o.apiVersion} ${o.kind}`).toBe(false);
  });

  it('report a typo in a Kruise kind and in a core kind at its path', () => {
    const file = path.join(work, 'typos.yaml');
    writeFileSync(
      file,
      [
        'apiVersion: apps.kruise.io/v1alpha1',
        'kind: CloneSet',
        'metadata: {name: web}',
        'spec:',
        '  selector: {matchLabels: {app: web}}',
        '  updateStrategy: {maxUnavaliable: 1}',
        '  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: app, image: "nginx:1.27"}]}}',
        '---',
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata: {name: web}',
        'spec:',
        '  selector: {matchLabels: {app: web}}',
        '  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: app, image: "nginx:1.27", imagePullPolcy: Always}]}}',
        '',
      ].join('\n'),
    );
    const report = runKubeconform(findKubeconform(), schemaDir, [file]);
    // kubeconform validates in parallel: its report is in no fixed order.
    const byKind = new Map(report.map((r) => [r.kind, r]));
    expect([...byKind.keys()].sort()).toEqual(['CloneSet', 'Deployment']);
    expect(byKind.get('CloneSet')).toMatchObject({ status: 'statusInvalid', msg: expect.stringMatching(/maxUnavaliable/) as unknown });
    expect(byKind.get('Deployment')).toMatchObject({ status: 'statusInvalid', msg: expect.stringMatching(/imagePullPolcy/) as unknown });
  });
});
