import { describe, expect, it } from 'vitest';
import {
  CloneSetDefinition,
  KINDS,
  closestMatch,
  findKind,
  validateObject,
  validatorFor,
  type SchemaIssue,
} from '../../../src/api/index.js';
import { SAMPLES } from './samples.js';

type Mutable = Record<string, any>;
const sample = (kind: keyof typeof SAMPLES): Mutable => SAMPLES[kind]() as Mutable;

function issuesOf(obj: unknown): SchemaIssue[] {
  return validateObject(obj).issues;
}
function only(obj: unknown): SchemaIssue {
  const issues = issuesOf(obj);
  expect(issues, JSON.stringify(issues, null, 1)).toHaveLength(1);
  return issues[0]!;
}

describe('validateObject: valid objects', () => {
  for (const kind of Object.keys(SAMPLES) as (keyof typeof SAMPLES)[]) {
    it(`accepts a full ${kind}`, () => {
      const r = validateObject(sample(kind));
      expect(r.kind?.kind).toBe(kind);
      expect(r.issues).toEqual([]);
    });
  }

  it('accepts a minimal CloneSet and NodeImage without spec', () => {
    expect(
      issuesOf({
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'CloneSet',
        metadata: { name: 'x' },
        spec: { selector: { matchLabels: { a: 'b' } }, template: { spec: { containers: [{ name: 'c', image: 'i' }] } } },
      }),
    ).toEqual([]);
    expect(issuesOf({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'NodeImage', metadata: { name: 'n' } })).toEqual([]);
  });

  it('accepts metadata read back from a cluster (creationTimestamp null, managedFields)', () => {
    const o = sample('CloneSet');
    o.metadata.creationTimestamp = null;
    o.metadata.managedFields = [{ manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } }];
    o.spec.template.metadata.creationTimestamp = null;
    expect(issuesOf(o)).toEqual([]);
  });

  it('validates a kind at the versions it is also served at with the same schema (BroadcastJob v1beta1), not others', () => {
    const o: Mutable = { ...sample('BroadcastJob'), apiVersion: 'apps.kruise.io/v1beta1' };
    expect(findKind('apps.kruise.io/v1beta1', 'BroadcastJob')).toBe(findKind('apps.kruise.io/v1alpha1', 'BroadcastJob'));
    expect(issuesOf(o)).toEqual([]);
    o.spec.paralelism = 2;
    expect(only(o)).toMatchObject({ jsonPointer: '/spec/paralelism' });
    expect(findKind('apps.kruise.io/v1beta1', 'CloneSet')).toBeUndefined();
  });

  it('passes over non-Kruise objects', () => {
    const r = validateObject({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x' }, spec: { bogus: 1 } });
    expect(r).toEqual({ issues: [] });
  });
});

describe('validateObject: errors at the right pointer with clear messages', () => {
  it('reports a typo with a did-you-mean hint (maxUnavaliable)', () => {
    const o = sample('CloneSet');
    o.spec.updateStrategy.maxUnavaliable = 1;
    const i = only(o);
    expect(i).toMatchObject({ jsonPointer: '/spec/updateStrategy/maxUnavaliable', keyword: 'additionalProperties' });
    expect(i.message).toBe('unknown field "maxUnavaliable"');
    expect(i.hint).toContain('did you mean "maxUnavailable"?');
  });

  it('reports unknown fields inside core types (container, volume, pod spec, PVC template)', () => {
    const o = sample('CloneSet');
    o.spec.template.spec.containers[0].imagePullPolcy = 'Always';
    o.spec.template.spec.volumes[0].emptyDir.sizeLimt = '1Gi';
    o.spec.template.spec.restartPolicyy = 'Always';
    o.spec.volumeClaimTemplates[0].spec.acessModes = ['ReadWriteOnce'];
    const issues = issuesOf(o);
    expect(issues.map((i) => [i.jsonPointer, i.hint])).toEqual([
      ['/spec/template/spec/containers/0/imagePullPolcy', expect.stringContaining('did you mean "imagePullPolicy"')],
      ['/spec/template/spec/restartPolicyy', expect.stringContaining('did you mean "restartPolicy"')],
      ['/spec/template/spec/volumes/0/emptyDir/sizeLimt', expect.stringContaining('did you mean "sizeLimit"')],
      ['/spec/volumeClaimTemplates/0/spec/acessModes', expect.stringContaining('did you mean "accessModes"')],
    ]);
  });

  it('reports unknown fields in SidecarSet containers (core Container + Kruise fields)', () => {
    const o = sample('SidecarSet');
    o.spec.containers[0].podInjectPolicyy = 'BeforeAppContainer';
    o.spec.containers[0].volumeMount = [];
    const issues = issuesOf(o);
    expect(issues.map((i) => i.jsonPointer)).toEqual(['/spec/containers/0/podInjectPolicyy', '/spec/containers/0/volumeMount']);
    expect(issues[0]!.hint).toContain('"podInjectPolicy"');
    expect(issues[1]!.hint).toContain('"volumeMounts"');
  });

  it('lists the known fields when nothing is close', () => {
    const o = sample('ImagePullJob');
    o.spec.completionPolicy.zzzzzzzz = true;
    const i = only(o);
    expect(i.jsonPointer).toBe('/spec/completionPolicy/zzzzzzzz');
    expect(i.hint).toBe('known fields here: type, activeDeadlineSeconds, ttlSecondsAfterFinished');
  });

  it('reports wrong types with the value and a fix', () => {
    const o = sample('CloneSet');
    o.spec.replicas = '3';
    const i = only(o);
    expect(i).toMatchObject({
      jsonPointer: '/spec/replicas',
      keyword: 'type',
      message: 'expected an integer, got the string "3"',
      hint: 'remove the quotes: 3',
    });

    const s = sample('SidecarSet');
    s.spec.selector.matchLabels.app = 1;
    expect(only(s)).toMatchObject({
      jsonPointer: '/spec/selector/matchLabels/app',
      message: 'expected a string, got the integer 1',
      hint: 'quote the value: "1"',
    });

    const c = sample('ContainerRecreateRequest');
    c.spec.strategy.forceRecreate = 'yes';
    expect(only(c)).toMatchObject({
      jsonPointer: '/spec/strategy/forceRecreate',
      message: 'expected a boolean (true/false), got the string "yes"',
    });
  });

  it('reports bad enum values with the allowed ones and a guess', () => {
    const o = sample('CloneSet');
    o.spec.updateStrategy.type = 'InPlaceIfPossibe';
    const i = only(o);
    expect(i.jsonPointer).toBe('/spec/updateStrategy/type');
    expect(i.keyword).toBe('enum');
    expect(i.message).toBe(
      'the string "InPlaceIfPossibe" is not allowed; expected one of: ReCreate, InPlaceIfPossible, InPlaceOnly, OnDelete',
    );
    expect(i.hint).toBe('did you mean "InPlaceIfPossible"?');

    const j = sample('ImagePullJob');
    j.spec.completionPolicy.type = 'Sometimes';
    expect(only(j)).toMatchObject({ jsonPointer: '/spec/completionPolicy/type', keyword: 'enum' });
  });

  it('reports missing required fields at the missing field', () => {
    const o = sample('CloneSet');
    delete o.spec.selector;
    expect(only(o)).toMatchObject({ jsonPointer: '/spec/selector', keyword: 'required', message: 'missing required field "selector"' });

    const c = sample('ContainerRecreateRequest');
    delete c.spec.podName;
    expect(only(c)).toMatchObject({ jsonPointer: '/spec/podName', keyword: 'required' });

    const j = sample('ImagePullJob');
    delete j.spec.image;
    expect(only(j)).toMatchObject({ jsonPointer: '/spec/image', keyword: 'required' });

    const cs = sample('CloneSet');
    delete cs.spec.template.spec.containers[1].name;
    expect(only(cs)).toMatchObject({ jsonPointer: '/spec/template/spec/containers/1/name', keyword: 'required' });
  });

  it('checks IntOrString fields: integers, percentages, and rejects other shapes', () => {
    const ok = sample('CloneSet');
    ok.spec.updateStrategy.maxUnavailable = 2;
    ok.spec.updateStrategy.maxSurge = '50%';
    expect(issuesOf(ok)).toEqual([]);

    const bad = sample('CloneSet');
    bad.spec.updateStrategy.maxUnavailable = 'two';
    expect(only(bad)).toMatchObject({
      jsonPointer: '/spec/updateStrategy/maxUnavailable',
      message: 'expected a non-negative integer or a percentage such as "25%", got the string "two"',
    });

    const float = sample('SidecarSet');
    float.spec.updateStrategy.maxUnavailable = 1.5;
    expect(only(float)).toMatchObject({
      jsonPointer: '/spec/updateStrategy/maxUnavailable',
      message: 'expected an integer or a string, got the number 1.5',
    });

    const neg = sample('CloneSet');
    neg.spec.updateStrategy.partition = -1;
    expect(only(neg)).toMatchObject({ jsonPointer: '/spec/updateStrategy/partition', keyword: 'minimum' });

    const port = sample('CloneSet');
    port.spec.template.spec.containers[0].readinessProbe.httpGet.port = true;
    expect(only(port)).toMatchObject({
      jsonPointer: '/spec/template/spec/containers/0/readinessProbe/httpGet/port',
      message: 'expected an integer or a string, got the boolean true',
    });
  });

  it('checks the value sets of stable core enums (imagePullPolicy, restartPolicy, accessModes)', () => {
    const o = sample('CloneSet');
    o.spec.template.spec.containers[0].imagePullPolicy = 'always';
    o.spec.template.spec.restartPolicy = 'Sometimes';
    o.spec.volumeClaimTemplates[0].spec.accessModes = ['ReadWriteOnce', 'ReadWriteMany', 'RWO'];
    const issues = issuesOf(o);
    expect(issues.map((i) => [i.jsonPointer, i.keyword, i.hint])).toEqual([
      ['/spec/template/spec/containers/0/imagePullPolicy', 'enum', 'did you mean "Always"?'],
      ['/spec/template/spec/restartPolicy', 'enum', undefined],
      ['/spec/volumeClaimTemplates/0/spec/accessModes/2', 'enum', undefined],
    ]);
    expect(issues[0]!.message).toBe('the string "always" is not allowed; expected one of: Always, IfNotPresent, Never');
  });

  it('checks quantities, timestamps and bounds', () => {
    const q = sample('CloneSet');
    q.spec.template.spec.containers[0].resources.limits.cpu = '500mm';
    expect(only(q)).toMatchObject({
      jsonPointer: '/spec/template/spec/containers/0/resources/limits/cpu',
      message: 'the string "500mm" is not a Kubernetes quantity',
    });

    const t = sample('ImagePullJob');
    t.status.startTime = 'yesterday';
    expect(only(t)).toMatchObject({
      jsonPointer: '/status/startTime',
      keyword: 'format',
      message: 'the string "yesterday" is not an RFC 3339 timestamp',
    });

    const d = sample('ContainerRecreateRequest');
    d.spec.activeDeadlineSeconds = 2;
    expect(only(d)).toMatchObject({ jsonPointer: '/spec/activeDeadlineSeconds', message: 'must be ≥ 3, got 2' });

    const e = sample('ContainerRecreateRequest');
    e.spec.containers = [];
    expect(only(e)).toMatchObject({ jsonPointer: '/spec/containers', message: 'must list at least 1 item' });
  });

  it('reports a wrong apiVersion/kind pair of a Kruise group, and non-objects', () => {
    const r = validateObject({ apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet', metadata: { name: 'x' } });
    expect(r.kind).toBeUndefined();
    expect(r.issues).toHaveLength(1);
    expect(r.issues[0]).toMatchObject({ keyword: 'kind', jsonPointer: '/apiVersion' });
    expect(r.issues[0]!.message).toBe('apps.kruise.io/v1beta1 CloneSet is not a kind cdk8s-kruise models');
    expect(r.issues[0]!.hint).toBe('cdk8s-kruise models CloneSet as apps.kruise.io/v1alpha1');
    const typo = validateObject({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'Cloneset', metadata: { name: 'x' } }).issues[0]!;
    expect(typo).toMatchObject({ jsonPointer: '/kind', keyword: 'kind', hint: 'did you mean kind CloneSet?' });
    expect(validateObject('hello').issues[0]).toMatchObject({ jsonPointer: '', message: 'expected an object, got the string "hello"' });
  });

  it('escapes JSON pointer tokens', () => {
    const o = sample('NodeImage');
    o.spec.images['docker.io/library/nginx'].tags[0].tagg = 'x';
    expect(only(o).jsonPointer).toBe('/spec/images/docker.io~1library~1nginx/tags/0/tagg');
  });

  it('reports every problem of a document, not only the first', () => {
    const o = sample('SidecarSet');
    o.spec.updateStrategy.type = 'Rolling';
    o.spec.containers[0].name = 5;
    o.spec.bogus = 1;
    expect(
      issuesOf(o)
        .map((i) => i.keyword)
        .sort(),
    ).toEqual(['additionalProperties', 'enum', 'type']);
  });
});

describe('validator lifecycle', () => {
  it('compiles each validator once and caches it', () => {
    expect(validatorFor(CloneSetDefinition)).toBe(validatorFor(CloneSetDefinition));
  });

  it('finds every kind by apiVersion and kind', () => {
    for (const k of KINDS) expect(findKind(`${k.group}/${k.version}`, k.kind)).toBe(k);
    expect(findKind('apps.kruise.io/v1alpha1', 'Nope')).toBeUndefined();
  });

  it('closestMatch only suggests plausible typos', () => {
    expect(closestMatch('maxUnavaliable', ['maxUnavailable', 'maxSurge'])).toBe('maxUnavailable');
    expect(closestMatch('replcias', ['replicas', 'selector'])).toBe('replicas');
    expect(closestMatch('foo', ['replicas', 'selector'])).toBeUndefined();
  });
});

describe('metadata checks', () => {
  it('rejects invalid names, namespaces, label keys/values and annotation keys', () => {
    const o = sample('CloneSet');
    o.metadata.name = 'Web_1';
    o.metadata.namespace = 'team.a';
    o.metadata.labels = { app: 'web server', 'bad key!': 'x', 'example.io/ok': 'y' };
    o.metadata.annotations = { '/nope': 'x', 'kruise.io/container-exit-priority': '{}' };
    const issues = issuesOf(o);
    expect(issues.map((i) => [i.jsonPointer, i.message])).toEqual([
      ['/metadata/annotations/~1nope', 'key "/nope" is not a valid label/annotation key'],
      ['/metadata/labels/app', 'the string "web server" is not a valid label value'],
      ['/metadata/labels/bad key!', 'key "bad key!" is not a valid label/annotation key'],
      ['/metadata/name', 'the string "Web_1" is not a valid object name'],
      ['/metadata/namespace', 'the string "team.a" is not a valid namespace name'],
    ]);
    expect(issues.every((i) => i.hint)).toBe(true);
  });

  it('accepts prefixed keys, empty label values and long valid names', () => {
    const o = sample('SidecarSet');
    o.metadata.name = 'a'.repeat(63) + '.example.com';
    o.metadata.labels = { 'app.kubernetes.io/name': 'x', empty: '' };
    expect(issuesOf(o)).toEqual([]);
    o.metadata.name = 'a'.repeat(254);
    expect(only(o)).toMatchObject({ jsonPointer: '/metadata/name', keyword: 'maxLength' });
  });
});
