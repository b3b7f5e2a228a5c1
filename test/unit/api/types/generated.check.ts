/**
 * Compile-time proof that the generated, documented interfaces (src/api/types/generated.ts) and
 * TypeBox's Static types of the same schemas are mutually assignable. Type-checked by
 * test/unit/api/types/generate.test.ts (TypeScript compiler API) and by `npm run typecheck`.
 */
import type { Static } from '@sinclair/typebox';
import type * as G from '../../../../src/api/types/generated.js';
import type * as S from '../../../../src/api/index.js';

type Same<X, Y> = [X] extends [Y] ? ([Y] extends [X] ? true : false) : false;
/** A kind served at several versions: its Static apiVersion is `string` (the versions come from the contract table). */
type SameServed<X, Y> = Same<Omit<X, 'apiVersion'>, Omit<Y, 'apiVersion'>>;

export const sameShape: Record<string, true> = {
  LabelSelectorRequirement: true satisfies Same<G.LabelSelectorRequirement, Static<typeof S.LabelSelectorRequirementSchema>>,
  LabelSelector: true satisfies Same<G.LabelSelector, Static<typeof S.LabelSelectorSchema>>,
  ObjectMeta: true satisfies Same<G.ObjectMeta, Static<typeof S.ObjectMetaSchema>>,
  ObjectReference: true satisfies Same<G.ObjectReference, Static<typeof S.ObjectReferenceSchema>>,
  OwnerReference: true satisfies Same<G.OwnerReference, Static<typeof S.OwnerReferenceSchema>>,
  SidecarContainer: true satisfies Same<G.SidecarContainer, Static<typeof S.SidecarContainerSchema>>,
  SidecarInitContainer: true satisfies Same<G.SidecarInitContainer, Static<typeof S.SidecarInitContainerSchema>>,
  SidecarSet: true satisfies SameServed<G.SidecarSet, Static<typeof S.SidecarSetSchema>>,
  SidecarSetSpec: true satisfies Same<G.SidecarSetSpec, Static<typeof S.SidecarSetSpecSchema>>,
  SidecarSetStatus: true satisfies Same<G.SidecarSetStatus, Static<typeof S.SidecarSetStatusSchema>>,
  SidecarSetUpdateStrategy: true satisfies Same<G.SidecarSetUpdateStrategy, Static<typeof S.SidecarSetUpdateStrategySchema>>,
  CloneSetCondition: true satisfies Same<G.CloneSetCondition, Static<typeof S.CloneSetConditionSchema>>,
  CloneSetScaleStrategy: true satisfies Same<G.CloneSetScaleStrategy, Static<typeof S.CloneSetScaleStrategySchema>>,
  CloneSet: true satisfies Same<G.CloneSet, Static<typeof S.CloneSetSchema>>,
  CloneSetSpec: true satisfies Same<G.CloneSetSpec, Static<typeof S.CloneSetSpecSchema>>,
  CloneSetStatus: true satisfies Same<G.CloneSetStatus, Static<typeof S.CloneSetStatusSchema>>,
  CloneSetUpdateStrategy: true satisfies Same<G.CloneSetUpdateStrategy, Static<typeof S.CloneSetUpdateStrategySchema>>,
  LifecycleHook: true satisfies Same<G.LifecycleHook, Static<typeof S.LifecycleHookSchema>>,
  Lifecycle: true satisfies Same<G.Lifecycle, Static<typeof S.LifecycleSchema>>,
  UpdatePriorityStrategy: true satisfies Same<G.UpdatePriorityStrategy, Static<typeof S.UpdatePriorityStrategySchema>>,
  CompletionPolicy: true satisfies Same<G.CompletionPolicy, Static<typeof S.CompletionPolicySchema>>,
  ImagePullJobNodeSelector: true satisfies Same<G.ImagePullJobNodeSelector, Static<typeof S.ImagePullJobNodeSelectorSchema>>,
  ImagePullJob: true satisfies SameServed<G.ImagePullJob, Static<typeof S.ImagePullJobSchema>>,
  ImagePullJobSpec: true satisfies Same<G.ImagePullJobSpec, Static<typeof S.ImagePullJobSpecSchema>>,
  ImagePullJobStatus: true satisfies Same<G.ImagePullJobStatus, Static<typeof S.ImagePullJobStatusSchema>>,
  PullPolicy: true satisfies Same<G.PullPolicy, Static<typeof S.PullPolicySchema>>,
  SandboxConfig: true satisfies Same<G.SandboxConfig, Static<typeof S.SandboxConfigSchema>>,
  ContainerRecreateRequestContainer: true satisfies Same<
    G.ContainerRecreateRequestContainer,
    Static<typeof S.ContainerRecreateRequestContainerSchema>
  >,
  ContainerRecreateRequestContainerState: true satisfies Same<
    G.ContainerRecreateRequestContainerState,
    Static<typeof S.ContainerRecreateRequestContainerStateSchema>
  >,
  ContainerRecreateRequest: true satisfies Same<G.ContainerRecreateRequest, Static<typeof S.ContainerRecreateRequestSchema>>,
  ContainerRecreateRequestSpec: true satisfies Same<G.ContainerRecreateRequestSpec, Static<typeof S.ContainerRecreateRequestSpecSchema>>,
  ContainerRecreateRequestStatus: true satisfies Same<
    G.ContainerRecreateRequestStatus,
    Static<typeof S.ContainerRecreateRequestStatusSchema>
  >,
  ContainerRecreateRequestStrategy: true satisfies Same<
    G.ContainerRecreateRequestStrategy,
    Static<typeof S.ContainerRecreateRequestStrategySchema>
  >,
  ProbeHandler: true satisfies Same<G.ProbeHandler, Static<typeof S.ProbeHandlerSchema>>,
  ImageSpec: true satisfies Same<G.ImageSpec, Static<typeof S.ImageSpecSchema>>,
  ImageTagSpec: true satisfies Same<G.ImageTagSpec, Static<typeof S.ImageTagSpecSchema>>,
  ImageTagStatus: true satisfies Same<G.ImageTagStatus, Static<typeof S.ImageTagStatusSchema>>,
  NodeImage: true satisfies SameServed<G.NodeImage, Static<typeof S.NodeImageSchema>>,
  NodeImageSpec: true satisfies Same<G.NodeImageSpec, Static<typeof S.NodeImageSpecSchema>>,
  NodeImageStatus: true satisfies Same<G.NodeImageStatus, Static<typeof S.NodeImageStatusSchema>>,
  ReferenceObject: true satisfies Same<G.ReferenceObject, Static<typeof S.ReferenceObjectSchema>>,
  DaemonSetSpec: true satisfies Same<G.DaemonSetSpec, Static<typeof S.DaemonSetSpecSchema>>,
  DaemonSetStatus: true satisfies Same<G.DaemonSetStatus, Static<typeof S.DaemonSetStatusSchema>>,
  DaemonSetUpdateStrategy: true satisfies Same<G.DaemonSetUpdateStrategy, Static<typeof S.DaemonSetUpdateStrategySchema>>,
  RollingUpdateDaemonSet: true satisfies Same<G.RollingUpdateDaemonSet, Static<typeof S.RollingUpdateDaemonSetSchema>>,
};
