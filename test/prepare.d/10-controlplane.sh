#!/usr/bin/env bash
# Builds the test control plane (kube-apiserver, etcd, kubectl) from test/controlplane/go.mod into a
# cache directory outside git, the way envtest expects its assets. Idempotent: a complete cached
# build is reused. Skipped entirely when KUBEBUILDER_ASSETS points at existing envtest assets.
#
#   CDK8S_KRUISE_CONTROLPLANE_DIR  where to put the binaries
#                                  (default ${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-kruise/controlplane/<version>)
#   KUBEBUILDER_ASSETS             a directory with kube-apiserver, etcd and kubectl: nothing is built
set -euo pipefail
module_dir="$(cd "$(dirname "$0")/../controlplane" && pwd)"
# shellcheck source=../controlplane/versions.env
. "$module_dir/versions.env"
version="${KUBERNETES_VERSION:?}"
log() { echo "[controlplane] $*" >&2; }
# shellcheck source=lib/k8s-build.bash
. "$(dirname "$0")/lib/k8s-build.bash"

out="${CDK8S_KRUISE_CONTROLPLANE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-kruise/controlplane/$version}"
if k8s_build_reuse_or_lock KUBEBUILDER_ASSETS kube-apiserver etcd; then exit 0; fi

k8s_build_check_go KUBEBUILDER_ASSETS
log "building kube-apiserver, etcd and kubectl $version into $out"
log "the first build downloads ~0.5 GB of Go modules and takes several minutes; later runs reuse it"

rm -f "$stamp"
k8s_build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver
k8s_build etcd go.etcd.io/etcd/server/v3
k8s_build kubectl k8s.io/kubernetes/cmd/kubectl
"$out/kube-apiserver" --version >&2
echo "$fingerprint" > "$stamp"
log "done: $out"
