/** The admission.k8s.io/v1 shapes the webhook server and its handlers share. */
import type { KubeObject } from '../types.js';

/** admission.k8s.io/v1 AdmissionRequest (the fields handlers read). */
export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  name?: string;
  namespace?: string;
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  userInfo?: { username?: string; groups?: string[] };
  object?: KubeObject;
  oldObject?: KubeObject;
  dryRun?: boolean;
}

/** One RFC 6902 operation. */
export interface JsonPatchOp {
  op: 'add' | 'remove' | 'replace' | 'test';
  path: string;
  value?: unknown;
}

export type AdmissionResult =
  { allowed: true; patch?: JsonPatchOp[]; warnings?: string[] } | { allowed: false; code?: number; reason?: string; message: string };

/** A webhook endpoint, as registered in src/runtime/manager/registry.ts. */
export interface AdmissionHandler {
  /** Metric/log label, e.g. `mcontainerrecreaterequest`. */
  readonly name: string;
  /** URL path, e.g. `/mutate-apps-kruise-io-v1alpha1-containerrecreaterequest`. */
  readonly path: string;
  readonly type: 'mutating' | 'validating';
  handle(req: AdmissionRequest): Promise<AdmissionResult>;
}
