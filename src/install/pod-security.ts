/**
 * Security settings shared by the manager and the daemon: restricted Pod Security Standard wherever the
 * workload allows it.
 */

export const SECCOMP_RUNTIME_DEFAULT = { type: 'RuntimeDefault' } as const;

/** The non-root user of the runtime image (the image's /etc/passwd has uid/gid 65532). */
export const RUNTIME_UID = 65532;

export function restrictedContainerSecurityContext(runAsRoot = false): Record<string, unknown> {
  return {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    privileged: false,
    readOnlyRootFilesystem: true,
    runAsNonRoot: !runAsRoot,
    ...(runAsRoot ? { runAsUser: 0 } : {}),
    seccompProfile: SECCOMP_RUNTIME_DEFAULT,
  };
}

export function podSecurityContext(options: { runAsRoot?: boolean; supplementalGroups?: number[] } = {}): Record<string, unknown> {
  const sc: Record<string, unknown> = { seccompProfile: SECCOMP_RUNTIME_DEFAULT };
  if (options.runAsRoot) {
    sc.runAsUser = 0;
    sc.runAsGroup = 0;
  } else {
    sc.runAsNonRoot = true;
    sc.runAsUser = RUNTIME_UID;
    sc.runAsGroup = RUNTIME_UID;
  }
  if (options.supplementalGroups?.length) sc.supplementalGroups = options.supplementalGroups;
  return sc;
}

/** A writable /tmp on a read-only root filesystem (Node and the webhook certificate files need one). */
export const TMP_VOLUME = { name: 'tmp', emptyDir: { sizeLimit: '64Mi' } } as const;
export const TMP_MOUNT = { name: 'tmp', mountPath: '/tmp' } as const;
