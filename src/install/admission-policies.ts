import { KRUISE_GROUP, LABEL_CRR_NODE_NAME, LABEL_CRR_POD_UID } from '../contracts/index.js';
import type { KubeObject } from './types.js';
import { NAMES, meta, type InstallSpec } from './spec.js';

/**
 * ValidatingAdmissionPolicies that narrow two RBAC rules RBAC itself cannot narrow (it restricts neither a
 * create by name nor any verb by a field of the object):
 *
 * - The daemon writes ContainerRecreateRequests (and pod and NodePodProbe status) cluster-wide by RBAC. The policy
 *   binds every such write to the node its ServiceAccount token was issued for (the
 *   `authentication.kubernetes.io/node-name` extra a pod-bound token carries): a CRR's `crr.apps.kruise.io/node-name`
 *   label, which the CRR webhook sets from the pod's `spec.nodeName` on create and keeps immutable, must name that
 *   node before and after the write, a pod's status may be written only for a pod bound to it, and a NodePodProbe's
 *   status only for its own node's. A daemon therefore cannot restart containers
 *   of a pod on another node, nor fake another node's CRR progress. Its metadata writes on a CRR may not change
 *   the spec or the pod-uid label: that check is made here, by the API server, so the CRR webhook can leave the
 *   daemon's updates alone (a manager that is down never blocks a CRR the daemon is carrying out).
 * - The manager writes ConfigMaps cluster-wide by RBAC, for the launch-priority barriers only: the policy lets
 *   it create and update only a `<pod>-barrier` ConfigMap owned by that pod whose keys are `p_<priority>`.
 *
 * Both policies run in the API server (CEL, no webhook): they hold while the runtime is down. They need
 * admissionregistration.k8s.io/v1 policies and node-bound ServiceAccount tokens, i.e. Kubernetes 1.30 or newer.
 */

const ADMISSION = 'admissionregistration.k8s.io/v1';
/** The user extra a pod-bound ServiceAccount token carries: the node the pod runs on. */
export const NODE_NAME_EXTRA = 'authentication.kubernetes.io/node-name';
export const DAEMON_NODE_POLICY = 'kruise-daemon-node-scope';
export const MANAGER_CONFIGMAP_POLICY = 'kruise-manager-configmap-scope';

/** The user name of a ServiceAccount's tokens. */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/** A CEL string literal (single-quoted; the values here are label keys and DNS names). */
function lit(s: string): string {
  if (!/^[A-Za-z0-9._:/-]*$/.test(s)) throw new Error(`not a plain name for a CEL literal: ${JSON.stringify(s)}`);
  return `'${s}'`;
}

/** `o.metadata.labels[key]`, or '' when absent. */
function label(o: string, key: string): string {
  return `(has(${o}.metadata.labels) && ${lit(key)} in ${o}.metadata.labels ? ${o}.metadata.labels[${lit(key)}] : '')`;
}

function policy(spec: InstallSpec, name: string, body: Record<string, unknown>): KubeObject[] {
  return [
    { apiVersion: ADMISSION, kind: 'ValidatingAdmissionPolicy', metadata: meta(spec, name, false) as KubeObject['metadata'], spec: body },
    {
      apiVersion: ADMISSION,
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: meta(spec, name, false) as KubeObject['metadata'],
      spec: { policyName: name, validationActions: ['Deny'] },
    },
  ];
}

/** The daemon's CRR and pod-status writes, bound to its own node. */
export function daemonNodePolicy(spec: InstallSpec): KubeObject[] {
  const daemon = serviceAccountUsername(spec.namespace, NAMES.daemonServiceAccount);
  const crr = "request.resource.resource == 'containerrecreaterequests'";
  return policy(spec, DAEMON_NODE_POLICY, {
    failurePolicy: 'Fail',
    matchConstraints: {
      resourceRules: [
        {
          apiGroups: [KRUISE_GROUP],
          apiVersions: ['*'],
          resources: ['containerrecreaterequests', 'containerrecreaterequests/status'],
          operations: ['CREATE', 'UPDATE', 'DELETE'],
        },
        { apiGroups: [''], apiVersions: ['v1'], resources: ['pods/status'], operations: ['UPDATE'] },
        { apiGroups: [KRUISE_GROUP], apiVersions: ['*'], resources: ['nodepodprobes/status'], operations: ['UPDATE'] },
      ],
    },
    matchConditions: [{ name: 'kruise-daemon', expression: `request.userInfo.username == ${lit(daemon)}` }],
    variables: [
      {
        name: 'node',
        expression:
          `has(request.userInfo.extra) && ${lit(NODE_NAME_EXTRA)} in request.userInfo.extra && size(request.userInfo.extra[${lit(NODE_NAME_EXTRA)}]) == 1 ? ` +
          `request.userInfo.extra[${lit(NODE_NAME_EXTRA)}][0] : ''`,
      },
      { name: 'newNode', expression: `request.operation == 'DELETE' ? '' : ${label('object', LABEL_CRR_NODE_NAME)}` },
      { name: 'oldNode', expression: `request.operation == 'CREATE' ? '' : ${label('oldObject', LABEL_CRR_NODE_NAME)}` },
    ],
    validations: [
      {
        expression: "variables.node != ''",
        message:
          'the kruise daemon must use a token bound to its pod (it names the node, user extra authentication.kubernetes.io/node-name)',
        reason: 'Forbidden',
      },
      {
        expression:
          `!(${crr}) || ((request.operation == 'CREATE' || variables.oldNode == variables.node) && ` +
          `(request.operation == 'DELETE' || variables.newNode == variables.node))`,
        messageExpression:
          "'the kruise daemon of node ' + variables.node + ' may only write ContainerRecreateRequests of pods on its node " +
          "(label crr.apps.kruise.io/node-name: ' + (request.operation == 'DELETE' ? variables.oldNode : variables.newNode) + ')'",
        reason: 'Forbidden',
      },
      {
        expression:
          `!(${crr}) || request.operation != 'UPDATE' || (has(request.subResource) && request.subResource != '') || ` +
          `(object.spec == oldObject.spec && ${label('object', LABEL_CRR_POD_UID)} == ${label('oldObject', LABEL_CRR_POD_UID)})`,
        message: 'the kruise daemon may not change the spec or the pod-uid label of a ContainerRecreateRequest',
        reason: 'Forbidden',
      },
      {
        expression: "request.resource.resource != 'pods' || (has(object.spec.nodeName) && object.spec.nodeName == variables.node)",
        messageExpression: "'the kruise daemon of node ' + variables.node + ' may only write the status of pods on its node'",
        reason: 'Forbidden',
      },
      {
        expression: "request.resource.resource != 'nodepodprobes' || object.metadata.name == variables.node",
        messageExpression:
          "'the kruise daemon of node ' + variables.node + ' may only write the probe results of its own NodePodProbe, not ' + object.metadata.name",
        reason: 'Forbidden',
      },
    ],
  });
}

/** `o` is a launch-priority barrier: `<pod>-barrier`, owned by that pod, keys `p_<priority>`. */
function barrier(o: string): string {
  return (
    `(has(${o}.metadata.ownerReferences) && ${o}.metadata.ownerReferences.exists(r, r.apiVersion == 'v1' && r.kind == 'Pod' && ` +
    `${o}.metadata.name == r.name + '-barrier') && (!has(${o}.data) || ${o}.data.all(k, k.matches('^p_-?[0-9]{1,10}$'))))`
  );
}

/** The manager's ConfigMap writes, confined to launch-priority barriers. */
export function managerConfigMapPolicy(spec: InstallSpec): KubeObject[] {
  const manager = serviceAccountUsername(spec.namespace, NAMES.managerServiceAccount);
  return policy(spec, MANAGER_CONFIGMAP_POLICY, {
    failurePolicy: 'Fail',
    matchConstraints: {
      resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], operations: ['CREATE', 'UPDATE', 'DELETE'] }],
    },
    matchConditions: [{ name: 'kruise-manager', expression: `request.userInfo.username == ${lit(manager)}` }],
    validations: [
      {
        expression: `request.operation != 'DELETE' && ${barrier('object')} && (request.operation == 'CREATE' || ${barrier('oldObject')})`,
        messageExpression:
          "'the kruise manager writes only launch-priority barriers (a <pod>-barrier ConfigMap owned by its pod, keys p_<priority>), " +
          "not ConfigMap ' + request.namespace + '/' + request.name + ' (' + request.operation + ')'",
        reason: 'Forbidden',
      },
    ],
  });
}

/** Every admission policy of the install (the daemon's only when the install has a daemon). */
export function admissionPolicies(spec: InstallSpec): KubeObject[] {
  return [...managerConfigMapPolicy(spec), ...(spec.daemon ? daemonNodePolicy(spec) : [])];
}
