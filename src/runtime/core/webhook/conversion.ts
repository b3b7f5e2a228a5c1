/**
 * CRD conversion reviews (apiextensions.k8s.io/v1 ConversionReview), pure and total: any body yields either an
 * answer for the API server (the converted objects, or a failure with a message naming the object and field) or,
 * when the body is not a review at all, a refusal with the HTTP status. Nothing here throws.
 */
import { measure, quote, type ReviewLimits } from './review.js';

export const CONVERSION_API_VERSION = 'apiextensions.k8s.io/v1';
export const CONVERSION_KIND = 'ConversionReview';

/** Converts the objects of one kind (a CRD whose versions' schemas differ) between its served versions. */
export interface KindConverter {
  readonly group: string;
  readonly kind: string;
  /** The object at `desiredAPIVersion`, or why it cannot be converted (never throws). */
  convert(
    object: unknown,
    desiredAPIVersion: string,
    at: string,
  ): { readonly ok: true; readonly object: unknown } | { readonly ok: false; readonly message: string };
}

/**
 * A review lists every object of a list read (the API server converts a page at once), so it may carry far more
 * fields than an admission review; the depth bound stays the admission one.
 */
export const DEFAULT_CONVERSION_LIMITS: ReviewLimits = { maxDepth: 64, maxFields: 500_000 };

export type ConversionAnswer =
  | { readonly ok: true; readonly body: Record<string, unknown>; readonly failed: boolean }
  | { readonly ok: false; readonly httpStatus: 400; readonly message: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function review(uid: string, result: { convertedObjects: unknown[] } | { message: string }): Record<string, unknown> {
  const response =
    'message' in result
      ? { uid, result: { status: 'Failure', message: result.message } }
      : { uid, convertedObjects: result.convertedObjects, result: { status: 'Success' } };
  return { apiVersion: CONVERSION_API_VERSION, kind: CONVERSION_KIND, response };
}

/**
 * The answer to a ConversionReview body. A review whose uid can be read but whose objects cannot be converted (an
 * unknown kind, a version not served, a malformed field) is answered with `result.status: Failure` and the reason,
 * which the API server reports to the client; a body without a readable uid gets HTTP 400.
 */
export function answerConversionReview(
  text: string,
  converters: readonly KindConverter[],
  limits: ReviewLimits = DEFAULT_CONVERSION_LIMITS,
): ConversionAnswer {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return { ok: false, httpStatus: 400, message: `body is not JSON: ${(err as Error).message.slice(0, 200)}` };
  }
  if (!isObject(parsed)) return { ok: false, httpStatus: 400, message: 'body must be a JSON object' };
  if (parsed.apiVersion !== CONVERSION_API_VERSION || parsed.kind !== CONVERSION_KIND)
    return {
      ok: false,
      httpStatus: 400,
      message: `expected ${CONVERSION_API_VERSION} ${CONVERSION_KIND}, got apiVersion ${quote(parsed.apiVersion)} kind ${quote(parsed.kind)}`,
    };
  const req = parsed.request;
  if (!isObject(req)) return { ok: false, httpStatus: 400, message: 'request: Required value: a ConversionReview carries a request' };
  const uid = req.uid;
  if (typeof uid !== 'string' || uid === '' || uid.length > 128)
    return { ok: false, httpStatus: 400, message: `request.uid: Invalid value: ${quote(uid)}: must be a non-empty string` };
  const fail = (message: string): ConversionAnswer => ({ ok: true, failed: true, body: review(uid, { message }) });
  const size = measure(req.objects, limits);
  if (size.exceeded)
    return fail(
      size.exceeded === 'depth'
        ? `request.objects: nested deeper than ${limits.maxDepth} levels`
        : `request.objects: more than ${limits.maxFields} fields in one review`,
    );
  const desired = req.desiredAPIVersion;
  if (typeof desired !== 'string' || desired === '')
    return fail(`request.desiredAPIVersion: Invalid value: ${quote(desired)}: must be a group/version`);
  if (!Array.isArray(req.objects)) return fail(`request.objects: Invalid value: ${quote(req.objects)}: must be a list of objects`);
  const out: unknown[] = [];
  for (let i = 0; i < req.objects.length; i++) {
    const obj: unknown = req.objects[i];
    const at = `request.objects[${i}]`;
    if (!isObject(obj)) return fail(`${at}: Invalid value: ${quote(obj)}: must be a JSON object`);
    const group = typeof obj.apiVersion === 'string' ? obj.apiVersion.split('/')[0] : undefined;
    const converter = converters.find((c) => c.group === group && c.kind === obj.kind);
    if (!converter) return fail(`${at}: no conversion for apiVersion ${quote(obj.apiVersion)} kind ${quote(obj.kind)} in this webhook`);
    const r = converter.convert(obj, desired, at);
    if (!r.ok) return fail(r.message);
    out.push(r.object);
  }
  return { ok: true, failed: false, body: review(uid, { convertedObjects: out }) };
}
