#!/usr/bin/env bash
# Builds the real node's Kubernetes parts (kubelet, kube-controller-manager, kube-scheduler,
# kube-proxy) from the same pinned module graph as the control plane (test/controlplane/go.mod), into
# a cache directory outside git. Idempotent: a complete cached build is reused. Skipped entirely when
# CDK8S_KRUISE_NODE_ASSETS points at a directory that already has the four binaries.
#
#   CDK8S_KRUISE_NODE_DIR     where to put the binaries
#                             (default ${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-kruise/node/<version>)
#   CDK8S_KRUISE_NODE_ASSETS  a directory with kubelet, kube-controller-manager, kube-scheduler and
#                             kube-proxy: nothing is built
set -euo pipefail
module_dir="$(cd "$(dirname "$0")/../controlplane" && pwd)"
# shellcheck source=../controlplane/versions.env
. "$module_dir/versions.env"
version="${KUBERNETES_VERSION:?}"
log() { echo "[node] $*" >&2; }
# shellcheck source=lib/k8s-build.bash
. "$(dirname "$0")/lib/k8s-build.bash"
binaries=(kubelet kube-controller-manager kube-scheduler kube-proxy)

out="${CDK8S_KRUISE_NODE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-kruise/node/$version}"
if k8s_build_reuse_or_lock CDK8S_KRUISE_NODE_ASSETS "${binaries[@]}"; then exit 0; fi
k8s_build_check_go CDK8S_KRUISE_NODE_ASSETS
log "building ${binaries[*]} $version into $out (shares the Go build cache with the control plane)"
rm -f "$stamp"
started=$SECONDS
for bin in "${binaries[@]}"; do
  k8s_build "$bin" "k8s.io/kubernetes/cmd/$bin"
done
"$out/kubelet" --version >&2
echo "$fingerprint" > "$stamp"
log "done in $((SECONDS - started))s: $out"
