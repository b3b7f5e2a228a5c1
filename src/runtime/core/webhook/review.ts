/**
 * Parsing of AdmissionReview v1 request bodies, pure and total: every input (any bytes, any JSON) yields
 * either a request the handlers can rely on or a refusal with the HTTP status and a message naming the
 * field. Nothing here throws, and the cost is bounded by the body size: one linear walk after JSON.parse.
 */
import type { AdmissionRequest } from './types.js';

/** Bounds on what one review may carry; see DEFAULT_REVIEW_LIMITS. */
export interface ReviewLimits {
  /** Nesting depth of request.object / request.oldObject (objects and arrays). */
  readonly maxDepth: number;
  /** Keys plus array elements of request.object and request.oldObject together. */
  readonly maxFields: number;
}

/**
 * No object our webhooks admit comes near these: a CloneSet with a large pod template has a few thousand
 * fields and depth < 20. The field bound keeps JSON.parse plus validation of one review at a few tens of
 * milliseconds of event-loop time; the depth bound keeps recursive code (JSON.stringify, ajv) off the
 * stack limit.
 */
export const DEFAULT_REVIEW_LIMITS: ReviewLimits = { maxDepth: 64, maxFields: 10_000 };

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';
export const ADMISSION_KIND = 'AdmissionReview';

const OPERATIONS = new Set(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);
/** The API server sends a UUID; anything much longer is not from it. */
const MAX_UID_LENGTH = 128;
/** User values quoted in messages are cut to this length. */
const QUOTE_LENGTH = 80;

export type ParsedReview =
  | { readonly ok: true; readonly request: AdmissionRequest }
  /** Refused before a handler sees it. `uid` is set when the review was well-formed but its object is not admissible. */
  | { readonly ok: false; readonly httpStatus: 400 | 413; readonly message: string; readonly uid?: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A short, printable rendering of a user value for an error message. */
export function quote(v: unknown): string {
  let s: string;
  try {
    s =
      typeof v === 'string' ? JSON.stringify(v) : v === undefined ? 'undefined' : (JSON.stringify(v) ?? Object.prototype.toString.call(v));
  } catch {
    s = Object.prototype.toString.call(v);
  }
  return s.length > QUOTE_LENGTH ? `${s.slice(0, QUOTE_LENGTH)}…(${s.length} chars)` : s;
}

const bad = (message: string): ParsedReview => ({ ok: false, httpStatus: 400, message });

/** Bytes at the start of a body in which `reviewUid` looks for the request uid. */
export const REVIEW_UID_PREFIX_BYTES = 4096;
const REVIEW_HEAD =
  /^\s*\{\s*(?:"kind"\s*:\s*"AdmissionReview"\s*,\s*"apiVersion"\s*:\s*"admission\.k8s\.io\/v1"|"apiVersion"\s*:\s*"admission\.k8s\.io\/v1"\s*,\s*"kind"\s*:\s*"AdmissionReview")\s*,\s*"request"\s*:\s*\{\s*"uid"\s*:\s*"([0-9A-Za-z-]{1,128})"/;

/**
 * The request uid of a review too large to parse, read from the start of its body: the API server writes the
 * type fields first, then `request` with `uid` first. With it the refusal can be an AdmissionReview denial the
 * API server shows the tenant as a 413, rather than an HTTP error it reports as `500 InternalError: failed calling
 * webhook`. Anything else (a body that does not start like that) gets no uid.
 */
export function reviewUid(prefix: string): string | undefined {
  return REVIEW_HEAD.exec(prefix.slice(0, REVIEW_UID_PREFIX_BYTES))?.[1];
}

/**
 * Depth and field count of a JSON value, iteratively (a deep value cannot overflow the stack here), stopping
 * as soon as a limit is passed so the walk costs at most `maxFields` steps.
 */
export function measure(
  value: unknown,
  limits: ReviewLimits,
  budget = limits.maxFields,
): { depth: number; fields: number; exceeded?: 'depth' | 'fields' } {
  let fields = 0;
  let maxSeen = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    const d = depth + 1;
    if (d > maxSeen) maxSeen = d;
    if (d > limits.maxDepth) return { depth: d, fields, exceeded: 'depth' };
    const children = Array.isArray(v) ? v : Object.values(v as Record<string, unknown>);
    fields += children.length;
    if (fields > budget) return { depth: maxSeen, fields, exceeded: 'fields' };
    for (const c of children) if (typeof c === 'object' && c !== null) stack.push([c, d]);
  }
  return { depth: maxSeen, fields };
}

function checkObjectField(req: Record<string, unknown>, field: 'object' | 'oldObject', required: boolean): string | undefined {
  const v = req[field];
  if (v === undefined || v === null)
    return required ? `request.${field}: Required value: a ${String(req.operation)} review carries the ${field}` : undefined;
  if (!isObject(v)) return `request.${field}: Invalid value: ${quote(v)}: must be a JSON object`;
  const md = v.metadata;
  if (md !== undefined && !isObject(md)) return `request.${field}.metadata: Invalid value: ${quote(md)}: must be a JSON object`;
  if (isObject(md)) {
    for (const k of ['name', 'namespace', 'generateName', 'uid'] as const) {
      if (md[k] !== undefined && typeof md[k] !== 'string')
        return `request.${field}.metadata.${k}: Invalid value: ${quote(md[k])}: must be a string`;
    }
    for (const k of ['labels', 'annotations'] as const) {
      const m = md[k];
      if (m === undefined || m === null) continue;
      if (!isObject(m)) return `request.${field}.metadata.${k}: Invalid value: ${quote(m)}: must be a map of strings`;
      for (const [key, val] of Object.entries(m)) {
        if (typeof val !== 'string') return `request.${field}.metadata.${k}[${quote(key)}]: Invalid value: ${quote(val)}: must be a string`;
      }
    }
  }
  return undefined;
}

/** How much of the review envelope (apiVersion, request.uid, kind, resource, userInfo ...) adds to an object. */
const ENVELOPE_FIELDS = 200;
const ENVELOPE_DEPTH = 4;

/**
 * Members, elements and nesting depth of a JSON text, counted in one pass over its characters without
 * parsing it: JSON.parse of an object with 100k keys costs hundreds of milliseconds of event loop, this
 * costs a few. Commas and colons inside strings are skipped; on malformed JSON the counts are rough, and
 * JSON.parse reports the error.
 */
export function scanJson(text: string, stopAt: { fields: number; depth: number }): { fields: number; depth: number } {
  let fields = 0;
  let depth = 0;
  let maxDepth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) maxDepth = depth;
      fields++; // the first member or element (later ones follow a comma)
      if (maxDepth > stopAt.depth) break;
    } else if (c === 0x7d || c === 0x5d) depth--;
    else if (c === 0x2c && ++fields > stopAt.fields) break;
  }
  return { fields, depth: maxDepth };
}

/**
 * Parses one request body into an AdmissionRequest. Refuses with 400 whatever is not a well-formed
 * AdmissionReview v1 (wrong apiVersion/kind, uid not a non-empty string, operation unknown, object missing
 * where the operation implies one, object or metadata of the wrong type), and with 413 (keeping the uid so
 * the answer can be an AdmissionReview) an object deeper or larger than `limits`.
 */
export function parseAdmissionReview(body: string, limits: ReviewLimits = DEFAULT_REVIEW_LIMITS): ParsedReview {
  const scanned = scanJson(body, { fields: limits.maxFields + ENVELOPE_FIELDS, depth: limits.maxDepth + ENVELOPE_DEPTH });
  // Too large to parse: a 413 denial when the body names its uid where the API server writes it, else a 400.
  const tooLarge = (message: string): ParsedReview => {
    const uid = reviewUid(body);
    return uid === undefined ? bad(message) : { ok: false, httpStatus: 413, uid, message };
  };
  if (scanned.depth > limits.maxDepth + ENVELOPE_DEPTH) {
    return tooLarge(`body nests deeper than ${limits.maxDepth} levels below the review; no object this webhook admits needs that`);
  }
  if (scanned.fields > limits.maxFields + ENVELOPE_FIELDS) {
    return tooLarge(
      `body has more than ${limits.maxFields} fields; remove unknown or repeated fields (no object this webhook admits needs that many)`,
    );
  }
  let review: unknown;
  try {
    review = JSON.parse(body);
  } catch (err) {
    return bad(`body is not JSON: ${quote((err as Error).message)}; send an admission.k8s.io/v1 AdmissionReview`);
  }
  if (!isObject(review)) return bad(`body is ${quote(review)}, not an AdmissionReview object`);
  if (review.apiVersion !== ADMISSION_API_VERSION) {
    return bad(
      `apiVersion: Unsupported value: ${quote(review.apiVersion)}: this webhook serves "${ADMISSION_API_VERSION}" only (admissionReviewVersions: [v1])`,
    );
  }
  if (review.kind !== ADMISSION_KIND) return bad(`kind: Unsupported value: ${quote(review.kind)}: must be "${ADMISSION_KIND}"`);
  const req = review.request;
  if (!isObject(req))
    return bad(
      `request: ${req === undefined ? 'Required value' : `Invalid value: ${quote(req)}`}: an AdmissionReview to answer carries a request object`,
    );
  const uid = req.uid;
  if (typeof uid !== 'string' || uid.length === 0) return bad(`request.uid: Invalid value: ${quote(uid)}: must be a non-empty string`);
  if (uid.length > MAX_UID_LENGTH) return bad(`request.uid: Too long: ${uid.length} characters, at most ${MAX_UID_LENGTH}`);
  if (typeof req.operation !== 'string' || !OPERATIONS.has(req.operation)) {
    return bad(`request.operation: Unsupported value: ${quote(req.operation)}: supported values: "CREATE", "UPDATE", "DELETE", "CONNECT"`);
  }
  const kind = req.kind;
  if (!isObject(kind) || typeof kind.kind !== 'string' || typeof kind.version !== 'string' || typeof kind.group !== 'string') {
    return bad(`request.kind: Invalid value: ${quote(kind)}: must be {group, version, kind} strings`);
  }
  for (const k of ['name', 'namespace', 'subResource'] as const) {
    if (req[k] !== undefined && req[k] !== null && typeof req[k] !== 'string')
      return bad(`request.${k}: Invalid value: ${quote(req[k])}: must be a string`);
  }
  if (req.dryRun !== undefined && req.dryRun !== null && typeof req.dryRun !== 'boolean')
    return bad(`request.dryRun: Invalid value: ${quote(req.dryRun)}: must be a boolean`);
  const op = req.operation;
  const objectProblem =
    checkObjectField(req, 'object', op === 'CREATE' || op === 'UPDATE') ??
    checkObjectField(req, 'oldObject', op === 'UPDATE' || op === 'DELETE');
  if (objectProblem) return bad(objectProblem);

  let budget = limits.maxFields;
  for (const field of ['object', 'oldObject'] as const) {
    if (req[field] === undefined || req[field] === null) continue;
    const m = measure(req[field], limits, budget);
    if (m.exceeded === 'depth') {
      return {
        ok: false,
        httpStatus: 413,
        uid,
        message: `request.${field}: nested deeper than ${limits.maxDepth} levels; no ${kind.kind} needs that, so it is not validated`,
      };
    }
    if (m.exceeded === 'fields') {
      return {
        ok: false,
        httpStatus: 413,
        uid,
        message: `request.${field}: more than ${limits.maxFields} fields in the review; remove unknown or repeated fields (a ${kind.kind} needs far fewer)`,
      };
    }
    budget -= m.fields;
  }
  return { ok: true, request: req as unknown as AdmissionRequest };
}
