import { imageReferenceProblem } from '../../src/contracts/validators.js';

/**
 * Checks an OCI image reference (`[registry[:port]/]path[:tag][@digest]`, the grammar of
 * `distribution/reference`, shared with the policy rules). Returns a whole message for a construct's error (the
 * reference, the reason, the corrected reference or the expected form), or `undefined` when valid. The contract
 * layer's `imageReferenceError` gives the reason alone.
 */
export function imageReferenceMessage(image: string): string | undefined {
  const problem = imageReferenceProblem(image);
  if (problem === undefined) return undefined;
  if (typeof image !== 'string' || image.length === 0) return problem.reason;
  const start = `${JSON.stringify(image)} is not a valid image reference (${problem.reason})`;
  if (problem.fix !== undefined) return `${start}; use ${JSON.stringify(problem.fix)}`;
  return (
    `${start}; expected [registry[:port]/]name[:tag][@sha256:<hex>] ` +
    'with a lower-case repository name, e.g. "nginx:1.9.1" or "registry.example.com:5000/team/app@sha256:…"'
  );
}

/** Throws when `image` is given and is not a valid image reference, prefixed with `where` (construct path and field). */
export function checkImage(image: string | undefined, where: string): void {
  if (image === undefined) return;
  const error = imageReferenceMessage(image);
  if (error) throw new Error(`${where}: ${error}.`);
}
