// Our validator (src/api) and the real kube-apiserver, running the CRDs generated from the same
// TypeBox schemas, must agree: a valid object passes both, and an object with one schema violation
// is rejected by both at the same field (JSON pointer) for the same reason.
import type { KubernetesObject } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { KINDS, findKind, toCustomResourceDefinition, validateObject, type KindDefinition } from '../../src/api/index.js';
import { createNamespace, rawRequest, serverSideApply } from '../harness/index.js';
import { setTimeout as sleep } from 'node:timers/promises';

const API_VERSION = 'apps.kruise.io/v1alpha1';

/** Minimal valid objects, one per kind under test. */
const BASE: Record<string, KubernetesObject & { spec: unknown }> = {
  CloneSet: {
    apiVersion: API_VERSION,
    kind: 'CloneSet',
    metadata: { name: 'base' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'base' } },
      template: { metadata: { labels: { app: 'base' } }, spec: { containers: [{ name: 'app', image: 'nginx:1' }] } },
      updateStrategy: { type: 'ReCreate', maxUnavailable: '20%' },
    },
  },
  ContainerRecreateRequest: {
    apiVersion: API_VERSION,
    kind: 'ContainerRecreateRequest',
    metadata: { name: 'base' },
    spec: { podName: 'pod-0', containers: [{ name: 'app' }], strategy: { failurePolicy: 'Fail' } },
  },
  ImagePullJob: {
    apiVersion: API_VERSION,
    kind: 'ImagePullJob',
    metadata: { name: 'base' },
    spec: { image: 'nginx:1', completionPolicy: { type: 'Always' } },
  },
  SidecarSet: {
    apiVersion: API_VERSION,
    kind: 'SidecarSet',
    metadata: { name: 'base' },
    spec: { containers: [{ name: 'sidecar', image: 'busybox:1' }] },
  },
};

type Reason = 'type' | 'enum' | 'minimum' | 'pattern' | 'required' | 'unknown-field';

interface Case {
  readonly kind: keyof typeof BASE;
  /** JSON pointer of the field to break. */
  readonly pointer: string;
  /** New value, or `undefined` to delete the field. */
  readonly value: unknown;
  readonly reason: Reason;
}

const CASES: readonly Case[] = [
  { kind: 'CloneSet', pointer: '/spec/replicas', value: 'three', reason: 'type' },
  { kind: 'CloneSet', pointer: '/spec/replicas', value: -1, reason: 'minimum' },
  { kind: 'CloneSet', pointer: '/spec/updateStrategy/type', value: 'Sideways', reason: 'enum' },
  { kind: 'CloneSet', pointer: '/spec/updateStrategy/maxUnavailable', value: 'lots', reason: 'pattern' },
  { kind: 'CloneSet', pointer: '/spec/updateStrategy/maxUnavaliable', value: 1, reason: 'unknown-field' },
  { kind: 'ContainerRecreateRequest', pointer: '/spec/podName', value: undefined, reason: 'required' },
  { kind: 'ContainerRecreateRequest', pointer: '/spec/strategy/failurePolicy', value: 'Sometimes', reason: 'enum' },
  { kind: 'ImagePullJob', pointer: '/spec/completionPolicy/type', value: 'Sometimes', reason: 'enum' },
  { kind: 'SidecarSet', pointer: '/spec/containers/0/podInjectPolicy', value: 'Sideways', reason: 'enum' },
];

/**
 * Fields the CRD does not type, like upstream's (SidecarSet containers keep the core Container
 * fields under x-kubernetes-preserve-unknown-fields): the apiserver stores whatever it gets, so
 * only our validator can catch these. If the CRD starts typing them, move them to CASES.
 */
const VALIDATOR_ONLY: readonly Case[] = [
  { kind: 'SidecarSet', pointer: '/spec/containers/0/name', value: undefined, reason: 'required' },
  { kind: 'SidecarSet', pointer: '/spec/containers/0/image', value: 42, reason: 'type' },
];

/** Our validator's keyword for each reason. */
const KEYWORD: Record<Reason, string> = {
  type: 'type',
  enum: 'enum',
  minimum: 'minimum',
  pattern: 'pattern',
  required: 'required',
  'unknown-field': 'additionalProperties',
};

function setAt(obj: unknown, pointer: string, value: unknown): void {
  const tokens = pointer
    .split('/')
    .slice(1)
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
  let node = obj as Record<string, unknown>;
  for (const t of tokens.slice(0, -1)) node = node[t] as Record<string, unknown>;
  const last = tokens.at(-1)!;
  if (value === undefined) delete node[last];
  else node[last] = value;
}

/** `spec.containers[0].name` (apiserver field path) -> `/spec/containers/0/name`. */
function fieldToPointer(field: string): string {
  const tokens = field
    .replace(/^\./, '')
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')
    .filter(Boolean);
  return tokens.map((t) => `/${t.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

interface Rejection {
  readonly pointer: string;
  readonly reason: Reason | 'other';
  readonly message: string;
}

/** Classifies a Status cause the way our validator names keywords. */
function classify(cause: { reason?: string; message?: string; field?: string }): Rejection {
  const message = cause.message ?? '';
  const unknown = /unknown field "([^"]+)"/.exec(message);
  if (unknown) return { pointer: fieldToPointer(unknown[1]!), reason: 'unknown-field', message };
  const pointer = fieldToPointer(cause.field ?? '');
  const reason: Reason | 'other' =
    cause.reason === 'FieldValueRequired'
      ? 'required'
      : cause.reason === 'FieldValueNotSupported'
        ? 'enum'
        : /must be of type/.test(message)
          ? 'type'
          : /should be greater than or equal to/.test(message)
            ? 'minimum'
            : /should match/.test(message)
              ? 'pattern'
              : 'other';
  return { pointer, reason, message };
}

async function createDryRun(def: KindDefinition, obj: unknown, namespace: string): Promise<{ status: number; rejections: Rejection[] }> {
  const base = `/apis/${def.group}/${def.version}`;
  const path = def.scope === 'Namespaced' ? `${base}/namespaces/${namespace}/${def.plural}` : `${base}/${def.plural}`;
  const res = await rawRequest('POST', `${path}?dryRun=All&fieldValidation=Strict`, {
    body: JSON.stringify(obj),
    contentType: 'application/json',
  });
  if (res.status < 300) return { status: res.status, rejections: [] };
  const status = JSON.parse(res.body) as {
    message?: string;
    details?: { causes?: { reason?: string; message?: string; field?: string }[] };
  };
  const causes = status.details?.causes ?? [{ message: status.message }];
  return { status: res.status, rejections: causes.map(classify) };
}

describe('src/api validator agrees with the real kube-apiserver', () => {
  let namespace: string;

  beforeAll(async () => {
    namespace = await createNamespace('schema');
    // Install the CRDs generated from src/api itself (not dist/), so this tests the source of truth.
    for (const def of KINDS) {
      await serverSideApply(toCustomResourceDefinition(def) as unknown as KubernetesObject, { fieldManager: 'cdk8s-kruise-e2e-schema' });
    }
    for (const def of KINDS) {
      const name = `${def.plural}.${def.group}`;
      for (let i = 0; ; i++) {
        const res = await rawRequest('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
        const conditions =
          (JSON.parse(res.body) as { status?: { conditions?: { type: string; status: string }[] } }).status?.conditions ?? [];
        if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) break;
        if (i > 150) throw new Error(`CRD ${name} not Established`);
        await sleep(200);
      }
    }
  });

  it.each(Object.keys(BASE))('accepts the valid base %s in both', async (kind) => {
    const obj = BASE[kind]!;
    const def = findKind(API_VERSION, kind)!;
    expect(validateObject(obj).issues).toEqual([]);
    expect(await createDryRun(def, obj, namespace)).toEqual({ status: 201, rejections: [] });
  });

  it.each(CASES.map((c) => [`${c.kind} ${c.pointer} ${c.reason}`, c] as const))('%s: rejected by both at the same field', async (_n, c) => {
    const obj = structuredClone(BASE[c.kind]!);
    setAt(obj, c.pointer, c.value);
    const def = findKind(API_VERSION, c.kind)!;

    const server = await createDryRun(def, obj, namespace);
    // 422 Invalid for schema errors; 400 BadRequest for strict-decoding (unknown field) errors.
    expect([400, 422], `apiserver answered ${server.status} for ${c.pointer}=${JSON.stringify(c.value)}`).toContain(server.status);
    // The scale subresource may add a second cause for the same field (e.g. spec.replicas).
    const detail = JSON.stringify(server.rejections);
    expect([...new Set(server.rejections.map((r) => r.pointer))], detail).toEqual([c.pointer]);
    expect(
      server.rejections.map((r) => r.reason),
      detail,
    ).toContain(c.reason);

    const ours = validateObject(obj).issues;
    expect([...new Set(ours.map((i) => i.jsonPointer))], JSON.stringify(ours)).toEqual([c.pointer]);
    expect(ours.map((i) => i.keyword)).toContain(KEYWORD[c.reason]);
  });

  it.each(VALIDATOR_ONLY.map((c) => [`${c.kind} ${c.pointer} ${c.reason}`, c] as const))(
    '%s: stored by the apiserver (field not typed by the CRD) but reported by our validator',
    async (_n, c) => {
      const obj = structuredClone(BASE[c.kind]!);
      setAt(obj, c.pointer, c.value);
      const def = findKind(API_VERSION, c.kind)!;
      expect(await createDryRun(def, obj, namespace)).toEqual({ status: 201, rejections: [] });
      const ours = validateObject(obj).issues;
      expect(ours.map((i) => `${i.jsonPointer} ${i.keyword}`)).toEqual([`${c.pointer} ${KEYWORD[c.reason]}`]);
    },
  );
});
