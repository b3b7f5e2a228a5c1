import { obj } from '../k8s.js';

/**
 * The check two job kinds share (ImagePullJob and BroadcastJob): a completionPolicy of type Never never
 * finishes, so a deadline or a TTL after finishing set beside it can never apply, and upstream refuses both.
 */
export function neverCompletionWithDeadline(spec: Record<string, unknown>) {
  const cp = obj(spec.completionPolicy);
  if (cp.type !== 'Never') return [];
  return (['activeDeadlineSeconds', 'ttlSecondsAfterFinished'] as const)
    .filter((f) => cp[f] !== undefined && cp[f] !== null)
    .map((f) => ({
      jsonPointer: `/spec/completionPolicy/${f}`,
      message: `completionPolicy.${f} is set, but completionPolicy.type is Never, which never completes`,
      hint: `Remove ${f}, or use completionPolicy.type Always.`,
    }));
}
