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

if [ -n "${CDK8S_KRUISE_NODE_ASSETS:-}" ]; then
  for bin in "${binaries[@]}"; do
    [ -x "$CDK8S_KRUISE_NODE_ASSETS/$bin" ] || { log "CDK8S_KRUISE_NODE_ASSETS=$CDK8S_KRUISE_NODE_ASSETS has no executable $bin"; exit 1; }
  done
  log "using CDK8S_KRUISE_NODE_ASSETS=$CDK8S_KRUISE_NODE_ASSETS, nothing to build"
  exit 0
fi

out="${CDK8S_KRUISE_NODE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-kruise/node/$version}"
stamp="$out/.complete"
fingerprint="$(sha256sum "$module_dir/go.sum" | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$fingerprint" ]; then
  log "reusing $version node binaries in $out"
  exit 0
fi
mkdir -p "$out"
exec 9>"$out/.lock"
if ! flock -n 9; then
  log "another build into $out is running; waiting for it"
  flock 9
fi
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$fingerprint" ]; then
  log "reusing $version node binaries in $out (built by the run we waited for)"
  exit 0
fi
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
