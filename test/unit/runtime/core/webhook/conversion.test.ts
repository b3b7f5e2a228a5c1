import { describe, expect, it } from 'vitest';
import { answerConversionReview, type KindConverter } from '../../../../../src/runtime/core/webhook/conversion.js';
import { convertSidecarSet } from '../../../../../src/api/sidecarset-conversion.js';

const converters: KindConverter[] = [{ group: 'apps.kruise.io', kind: 'SidecarSet', convert: convertSidecarSet }];
const set = (apiVersion: string, spec: object = {}) => ({ apiVersion, kind: 'SidecarSet', metadata: { name: 's' }, spec });
const review = (request: unknown) => JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request });

describe('ConversionReview answers', () => {
  it('converts every object of the review, in order, and says Success', () => {
    const a = answerConversionReview(
      review({
        uid: 'u1',
        desiredAPIVersion: 'apps.kruise.io/v1beta1',
        objects: [set('apps.kruise.io/v1alpha1', { namespace: 'a' }), set('apps.kruise.io/v1beta1', { customVersion: 'v' })],
      }),
      converters,
    );
    expect(a).toEqual({
      ok: true,
      failed: false,
      body: {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        response: {
          uid: 'u1',
          result: { status: 'Success' },
          convertedObjects: [
            set('apps.kruise.io/v1beta1', { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'a' } } }),
            set('apps.kruise.io/v1beta1', { customVersion: 'v' }),
          ],
        },
      },
    });
  });

  it('an empty list converts to an empty list', () => {
    const a = answerConversionReview(review({ uid: 'u', desiredAPIVersion: 'apps.kruise.io/v1alpha1', objects: [] }), converters);
    expect(a.ok && a.body.response).toEqual({ uid: 'u', convertedObjects: [], result: { status: 'Success' } });
  });

  const failure = (request: unknown) => {
    const a = answerConversionReview(review(request), converters);
    if (!a.ok || !a.failed) throw new Error(`expected a failed review, got ${JSON.stringify(a)}`);
    return (a.body.response as { uid: string; result: { status: string; message: string } }).result;
  };

  it.each([
    ['a version not served', { desiredAPIVersion: 'apps.kruise.io/v9', objects: [set('apps.kruise.io/v1alpha1')] }, /served at/],
    ['no desired version', { objects: [] }, /request.desiredAPIVersion: Invalid value: undefined/],
    ['objects not a list', { desiredAPIVersion: 'apps.kruise.io/v1beta1', objects: { a: 1 } }, /request.objects: Invalid value/],
    ['an object not an object', { desiredAPIVersion: 'apps.kruise.io/v1beta1', objects: [42] }, /request.objects\[0\]: Invalid value: 42/],
    [
      'a kind nobody converts',
      { desiredAPIVersion: 'apps.kruise.io/v1beta1', objects: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet' }] },
      /request.objects\[0\]: no conversion for apiVersion "apps.kruise.io\/v1alpha1" kind "CloneSet"/,
    ],
    [
      'a malformed field of the second object',
      {
        desiredAPIVersion: 'apps.kruise.io/v1beta1',
        objects: [set('apps.kruise.io/v1alpha1'), set('apps.kruise.io/v1alpha1', { namespace: 1 })],
      },
      /request.objects\[1\].spec.namespace: must be a string/,
    ],
  ])('%s: a failed review naming the field', (_name, request, message) => {
    const r = failure({ uid: 'u', ...request });
    expect(r.status).toBe('Failure');
    expect(r.message).toMatch(message);
  });

  it('a review nested deeper than the bound fails without walking it', () => {
    const deep = '{"d":'.repeat(5_000) + '{}' + '}'.repeat(5_000);
    const body = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"u","desiredAPIVersion":"apps.kruise.io/v1beta1","objects":[${deep}]}}`;
    const a = answerConversionReview(body, converters);
    expect(a.ok && a.failed).toBe(true);
    expect(JSON.stringify(a.ok && a.body.response)).toMatch(/nested deeper than 64/);
  });

  it.each([
    ['not JSON', '{', /body is not JSON/],
    ['not an object', '[]', /body must be a JSON object/],
    [
      'another review type',
      JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }),
      /expected apiextensions.k8s.io\/v1 ConversionReview/,
    ],
    ['no request', JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview' }), /request: Required value/],
    ['no uid', review({ desiredAPIVersion: 'apps.kruise.io/v1beta1', objects: [] }), /request.uid: Invalid value/],
    ['a uid too long', review({ uid: 'x'.repeat(500), objects: [] }), /request.uid: Invalid value/],
  ])('%s: HTTP 400 (nothing to answer by uid)', (_name, body, message) => {
    const a = answerConversionReview(body, converters);
    expect(a.ok).toBe(false);
    expect(!a.ok && a.httpStatus).toBe(400);
    expect(!a.ok && a.message).toMatch(message);
  });
});
