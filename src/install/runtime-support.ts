import { kindWebhookPath, POD_MUTATING_PATH } from './webhooks.js';
import type { ServedKind } from './spec.js';

/**
 * The admission paths the bundled runtime serves. Registering a path nobody serves would make the API
 * server fail every matching request (failurePolicy Fail), so the install registers only these.
 * Kept as data so constructs do not import the runtime; test/unit/install-runtime-support.test.ts
 * checks it against the runtime's webhook registry (src/runtime/manager/registry.ts).
 */
export function bundledWebhookPaths(kinds: readonly ServedKind[]): { mutating: string[]; validating: string[] } {
  return {
    // The pod webhook (SidecarSet injection, exit priority) is not served yet: add POD_MUTATING_PATH
    // here when the runtime registers it, and the install starts registering mpod.kb.io.
    mutating: kinds.filter((k) => k.kind === 'ContainerRecreateRequest').map((k) => kindWebhookPath('mutate', k)),
    validating: kinds.map((k) => kindWebhookPath('validate', k)),
  };
}

/** Whether the bundled runtime answers pod CREATE admission requests. */
export function bundledServesPods(kinds: readonly ServedKind[]): boolean {
  return bundledWebhookPaths(kinds).mutating.includes(POD_MUTATING_PATH);
}
