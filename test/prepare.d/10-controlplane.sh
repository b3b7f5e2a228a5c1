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

if [ -n "${KUBEBUILDER_ASSETS:-}" ]; then
  for bin in kube-apiserver etcd; do
    [ -x "$KUBEBUILDER_ASSETS/$bin" ] || { log "KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS has no executable $bin"; exit 1; }
  done
  log "using KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS, nothing to build"
  exit 0
fi

out="${CDK8S_KRUISE_CONTROLPLANE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-kruise/controlplane/$version}"
stamp="$out/.complete"
fingerprint="$(sha256sum "$module_dir/go.sum" | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$fingerprint" ]; then
  log "reusing $version binaries in $out"
  exit 0
fi

# Concurrent test runs on a fresh machine must not build into the same files: one builds, the
# others wait for it and then reuse its result.
mkdir -p "$out"
exec 9>"$out/.lock"
if ! flock -n 9; then
  log "another build into $out is running; waiting for it"
  flock 9
fi
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$fingerprint" ]; then
  log "reusing $version binaries in $out (built by the run we waited for)"
  exit 0
fi

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
