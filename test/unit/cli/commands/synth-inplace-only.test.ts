import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';

const require = createRequire(import.meta.url);
const cdk8sLib = require.resolve('cdk8s');

// A cdk8s app (plain CommonJS on the real cdk8s library): a CloneSet that updates only in place, its container read
// from container.json beside it.
const APP = `
const { App, Chart, ApiObject } = require(${JSON.stringify(cdk8sLib)});
const container = require(require('path').join(__dirname, 'container.json'));
const app = new App();
const chart = new Chart(app, 'shop');
new ApiObject(chart, 'web', {
  apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', metadata: { name: 'web', namespace: 'shop' },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { readinessGates: [{ conditionType: 'InPlaceUpdateReady' }], containers: [container] } },
    updateStrategy: { type: 'InPlaceOnly' },
  },
});
app.synth();
`;

let dir: string;
const app = () => `${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(dir, 'app.cjs'))}`;
const setContainer = (c: object) => writeFileSync(path.join(dir, 'container.json'), JSON.stringify({ name: 'web', ...c }));
const synth = (out: string, ...flags: string[]) =>
  runCli(['synth', '--app', app(), '--output', out, '--config', path.join(dir, 'none.yaml'), ...flags]);

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'kruise-inplace-only-'));
  writeFileSync(path.join(dir, 'app.cjs'), APP);
});

describe('cdk8s-kruise synth: an InPlaceOnly workload compared with the previous output', { timeout: 180_000 }, () => {
  it('passes an image change, fails a change no update in place carries out (output untouched), and passes it against a directory that has it', async () => {
    const out = path.join(dir, 'dist');
    setContainer({ image: 'nginx:1.25' });
    expect((await synth(out)).code).toBe(0);
    const first = readFileSync(path.join(out, '20-app-shop.yaml'), 'utf8');

    setContainer({ image: 'nginx:1.27' });
    expect((await synth(out)).code).toBe(0);
    const second = readFileSync(path.join(out, '20-app-shop.yaml'), 'utf8');
    expect(second).not.toBe(first);

    setContainer({ image: 'nginx:1.27', ports: [{ containerPort: 8080 }] });
    const refused = await synth(out);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/KRUISE-INPLACE-001.*\/spec\/template\/spec\/containers\/0\/ports since the previous output/s);
    expect(refused.stderr).toContain('was left unchanged');
    expect(readFileSync(path.join(out, '20-app-shop.yaml'), 'utf8')).toBe(second);

    // Compared with an output that already has the port (--previous names it), nothing changed but what may.
    const other = path.join(dir, 'with-port');
    setContainer({ image: 'nginx:1.25', ports: [{ containerPort: 8080 }] });
    expect((await synth(other)).code).toBe(0);
    setContainer({ image: 'nginx:1.27', ports: [{ containerPort: 8080 }] });
    expect((await synth(out, '--previous', other)).code).toBe(0);
  });
});
