// Core Kubernetes kinds checked by `validate` (KRUISE-SCHEMA-004): the committed definitions are current, a
// valid object of every kind passes, typical mistakes are found at their field, and the validators the package
// build writes for the CLI report exactly what the run-time compiled ones report.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ValidateFunction } from 'ajv';
import { beforeAll, describe, expect, it } from 'vitest';
import { CORE_KINDS, coreKindDefinition } from '../../../src/api/core-kinds.js';
import {
  CORE_KINDS_SCHEMA_FILE,
  generateCoreKindsSchema,
  generateCoreSchema,
  serializeCoreSchema,
} from '../../../src/api/core/generate.js';
import { toIssues, validateCoreKind } from '../../../src/api/validate.js';
import { coreKindValidatorsSource } from '../../../src/api/validate-standalone.js';

const podSpec = { containers: [{ name: 'app', image: 'nginx', ports: [{ containerPort: 80, protocol: 'TCP' }] }] };
const template = { metadata: { labels: { app: 'a' } }, spec: podSpec };
const selector = { matchLabels: { app: 'a' } };
const meta = { name: 'a', namespace: 'ns', labels: { app: 'a' }, creationTimestamp: null };

/** One valid object per core kind, as cdk8s / kubectl write them. */
const VALID: Record<string, Record<string, unknown>> = {
  'v1 Pod': { metadata: meta, spec: { ...podSpec, restartPolicy: 'Always' } },
  'v1 Service': {
    metadata: meta,
    spec: { selector: { app: 'a' }, ports: [{ port: 80, targetPort: 'http', protocol: 'TCP' }], type: 'ClusterIP' },
  },
  'v1 ConfigMap': { metadata: meta, data: { 'a.conf': 'x=1' } },
  'v1 Secret': { metadata: meta, type: 'Opaque', data: { token: 'dG9rZW4=' }, stringData: { plain: 'text' } },
  'v1 ServiceAccount': { metadata: meta, automountServiceAccountToken: false },
  'v1 Namespace': { metadata: { name: 'ns', labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } },
  'v1 PersistentVolumeClaim': { metadata: meta, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
  'apps/v1 Deployment': {
    metadata: meta,
    spec: { replicas: 2, selector, template, strategy: { rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } } },
  },
  'apps/v1 StatefulSet': { metadata: meta, spec: { serviceName: 'a', selector, template } },
  'apps/v1 DaemonSet': { metadata: meta, spec: { selector, template } },
  'apps/v1 ReplicaSet': { metadata: meta, spec: { selector, template } },
  'batch/v1 Job': { metadata: meta, spec: { backoffLimit: 0, template: { ...template, spec: { ...podSpec, restartPolicy: 'Never' } } } },
  'batch/v1 CronJob': {
    metadata: meta,
    spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: { spec: { ...podSpec, restartPolicy: 'OnFailure' } } } } },
  },
};

function object(key: string, extra: (o: Record<string, unknown>) => void = () => {}): Record<string, unknown> {
  const [apiVersion, kind] = key.split(' ');
  const o = structuredClone({ apiVersion, kind, ...VALID[key] });
  extra(o);
  return o;
}

function check(key: string, obj: unknown) {
  return validateCoreKind(CORE_KINDS[key]!, obj);
}

describe('core kinds schema-checked by validate', () => {
  it('are generated up to date (run: npx tsx src/api/core/generate.ts)', async () => {
    const fresh = serializeCoreSchema(await generateCoreKindsSchema(await generateCoreSchema()));
    expect(readFileSync(CORE_KINDS_SCHEMA_FILE, 'utf8') === fresh).toBe(true);
  });

  it('accept a valid object of every kind', () => {
    expect(Object.keys(VALID).sort()).toEqual(Object.keys(CORE_KINDS).sort());
    for (const key of Object.keys(CORE_KINDS)) expect(check(key, object(key)), key).toEqual([]);
  });

  it('look kinds up by apiVersion and kind only', () => {
    expect(coreKindDefinition('apps/v1', 'Deployment')).toBe('V1Deployment');
    expect(coreKindDefinition('apps/v1beta1', 'Deployment')).toBeUndefined();
    expect(coreKindDefinition('apps.kruise.io/v1alpha1', 'StatefulSet')).toBeUndefined();
    expect(coreKindDefinition(1, 'Deployment')).toBeUndefined();
  });

  it.each([
    {
      what: 'an unknown container field, with a did-you-mean',
      key: 'apps/v1 Deployment',
      edit: (o: any) => (o.spec.template.spec.containers[0].imagePullPolcy = 'Always'),
      pointer: '/spec/template/spec/containers/0/imagePullPolcy',
      message: /unknown field "imagePullPolcy"/,
      hint: /did you mean "imagePullPolicy"/,
    },
    {
      what: 'a quoted integer',
      key: 'apps/v1 Deployment',
      edit: (o: any) => (o.spec.replicas = '2'),
      pointer: '/spec/replicas',
      message: /expected an integer, got the string "2"/,
      hint: /remove the quotes/,
    },
    {
      what: 'an enum value in the wrong case',
      key: 'batch/v1 Job',
      edit: (o: any) => (o.spec.template.spec.restartPolicy = 'never'),
      pointer: '/spec/template/spec/restartPolicy',
      message: /not allowed; expected one of: Always, OnFailure, Never/,
      hint: /did you mean "Never"/,
    },
    {
      what: 'a missing required field',
      key: 'batch/v1 CronJob',
      edit: (o: any) => delete o.spec.schedule,
      pointer: '/spec/schedule',
      message: /missing required field "schedule"/,
    },
    {
      what: 'an unknown top-level field',
      key: 'v1 ConfigMap',
      edit: (o: any) => (o.dat = {}),
      pointer: '/dat',
      message: /unknown field "dat"/,
      hint: /did you mean "data"/,
    },
    {
      what: 'a non-string ConfigMap value',
      key: 'v1 ConfigMap',
      edit: (o: any) => (o.data.port = 8080),
      pointer: '/data/port',
      message: /expected a string, got the integer 8080/,
    },
    {
      what: 'a Secret value that is not base64',
      key: 'v1 Secret',
      edit: (o: any) => (o.data.token = 'not base64!'),
      pointer: '/data/token',
      message: /not a valid byte/,
    },
    {
      what: 'an unknown Service spec field',
      key: 'v1 Service',
      edit: (o: any) => (o.spec.selectr = { app: 'a' }),
      pointer: '/spec/selectr',
      message: /unknown field "selectr"/,
    },
  ])('report $what at its field', ({ key, edit, pointer, message, hint }) => {
    const issues = check(key, object(key, edit));
    expect(issues).toHaveLength(1);
    expect(issues[0]!.jsonPointer).toBe(pointer);
    expect(issues[0]!.message).toMatch(message);
    if (hint) expect(issues[0]!.hint).toMatch(hint);
  });
});

describe('core kind validators written for the CLI', () => {
  let precompiled: Record<string, ValidateFunction>;
  beforeAll(() => {
    const module = { exports: {} as Record<string, ValidateFunction> };
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- evaluates the generated CommonJS module as the CLI requires it
    new Function('module', 'exports', 'require', coreKindValidatorsSource())(module, module.exports, createRequire(import.meta.url));
    precompiled = module.exports;
  }, 120_000);

  it('exist for every kind and report what the run-time compiled validators report', () => {
    expect(Object.keys(precompiled).sort()).toEqual([...new Set(Object.values(CORE_KINDS))].sort());
    for (const key of Object.keys(CORE_KINDS)) {
      const broken = object(key, (o: any) => {
        o.metadata.nmae = 'typo';
        o.spec = { ...(o.spec ?? {}), unknownField: 1, replicas: 'three' };
      });
      for (const obj of [object(key), broken, { apiVersion: 'x', kind: 'y', metadata: 'no' }]) {
        const fn = precompiled[CORE_KINDS[key]!]!;
        expect(fn(obj) ? [] : toIssues(fn.errors ?? []), key).toEqual(check(key, obj));
      }
    }
  });
});
