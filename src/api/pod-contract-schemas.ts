/**
 * Schemas of the JSON values pod-level contracts carry in annotations. They live apart from
 * pod-contracts.ts, which the runtime loads at start, so that the runtime (which needs only the types)
 * does not evaluate the schema library.
 *
 * @module
 */
import { Type, type Static } from '@sinclair/typebox';

/** Schema of the exit-priority annotation value (after JSON.parse). */
export const ContainerExitPrioritySchema = Type.Record(Type.String({ minLength: 1 }), Type.Integer({ minimum: 0, maximum: 2147483647 }), {
  description: 'Container name → exit priority. Main containers (priority 0 by default) exit first; larger values exit later.',
});
/** Parsed value of the container exit-priority annotation (`ANNOTATION_CONTAINER_EXIT_PRIORITY`). */
export type ContainerExitPriority = Static<typeof ContainerExitPrioritySchema>;

/** Value of the sidecarset-hash annotations on a pod, keyed by SidecarSet name. */
export const SidecarSetHashEntrySchema = Type.Object({
  updateTimestamp: Type.String(),
  hash: Type.String(),
  sidecarSetName: Type.String(),
  sidecarList: Type.Array(Type.String()),
  controllerRevision: Type.Optional(Type.String()),
});
/** One entry of the sidecarset-hash annotations. */
export type SidecarSetHashEntry = Static<typeof SidecarSetHashEntrySchema>;
