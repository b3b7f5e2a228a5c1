#!/usr/bin/env bash
# Builds the upstream peer, OpenKruise kruise-manager, from Go modules (test/kruise-peer/go.mod) into a
# cache directory outside git, next to the files it must be started with, taken from the same module:
#
#   <dir>/kruise-manager         the binary (CGO off, -trimpath, stripped)
#   <dir>/crds/*.yaml            upstream's CRDs of that version (config/crd/bases)
#   <dir>/webhook-configs.yaml   upstream's webhook configurations (config/webhook, names prefixed
#                                `kruise-`, namespace kruise-system, the Service dropped); they must exist
#                                before the manager starts, which rewrites them to its own URL and CA
#
# test/harness/kruise-peer.ts starts it; compatibility tests and bench/peer use it. Idempotent: a
# complete cached build of this go.sum is reused; concurrent runs wait for one build.
#
#   CDK8S_KRUISE_PEER_DIR   where to put the files (default ${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-kruise/kruise-peer/<version>)
#   KRUISE_PEER_ASSETS      a directory that already holds the layout above: nothing is built
set -euo pipefail
module_dir="$(cd "$(dirname "$0")/../kruise-peer" && pwd)"
# shellcheck source=../kruise-peer/versions.env
. "$module_dir/versions.env"
version="${KRUISE_VERSION:?}"
log() { echo "[kruise-peer] $*" >&2; }
# shellcheck source=lib/k8s-build.bash
. "$(dirname "$0")/lib/k8s-build.bash"
# shellcheck source=lib/kruise-module.bash
. "$(dirname "$0")/lib/kruise-module.bash"

out="${CDK8S_KRUISE_PEER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-kruise/kruise-peer/$version}"
if k8s_build_reuse_or_lock KRUISE_PEER_ASSETS kruise-manager; then
  dir="${KRUISE_PEER_ASSETS:-$out}"
  [ -s "$dir/webhook-configs.yaml" ] && compgen -G "$dir/crds/*.yaml" >/dev/null ||
    { log "$dir lacks crds/*.yaml or webhook-configs.yaml"; exit 1; }
  exit 0
fi

k8s_build_check_go KRUISE_PEER_ASSETS
kubectl="${KUBEBUILDER_ASSETS:-${CDK8S_KRUISE_CONTROLPLANE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-kruise/controlplane/$(. "$module_dir/../controlplane/versions.env"; echo "$KUBERNETES_VERSION")}}/kubectl"
[ -x "$kubectl" ] || { log "kubectl of the control plane is needed (10-controlplane.sh builds it): $kubectl"; exit 1; }
log "building upstream kruise-manager $version into $out"
log "the first build downloads ~100 MB of Go modules and needs ~8 CPU-minutes (~6 minutes on 2 idle cores); later runs reuse it"
rm -f "$stamp"

src="$(kruise_module_dir)"

started=$SECONDS
( while sleep 60; do log "  still building kruise-manager ($((SECONDS - started))s)"; done ) &
ticker=$!
trap 'kill "$ticker" 2>/dev/null || true' EXIT
(cd "$module_dir" && CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false" \
  nice -n 10 go build -p "${CONTROLPLANE_BUILD_JOBS:-2}" -trimpath -ldflags "-s -w" \
  -o "$out/.kruise-manager.tmp" github.com/openkruise/kruise) ||
  { rm -f "$out/.kruise-manager.tmp"; log "building kruise-manager failed"; exit 1; }
kill "$ticker" 2>/dev/null || true
mv -f "$out/.kruise-manager.tmp" "$out/kruise-manager"
log "built kruise-manager in $((SECONDS - started))s ($(du -h "$out/kruise-manager" | cut -f1))"

rm -rf "$out/crds" && mkdir -p "$out/crds"
cp "$src"/config/crd/bases/*.yaml "$out/crds/" && chmod -R u+w "$out/crds"

# upstream's config/webhook as the chart installs it: names prefixed, namespace set, Service dropped.
kdir="$(mktemp -d)"
cp -r "$src/config/webhook" "$kdir/webhook" && chmod -R u+w "$kdir"
sed -i '/^- service.yaml$/d' "$kdir/webhook/kustomization.yaml"
printf 'namePrefix: kruise-\nnamespace: kruise-system\nresources:\n- webhook\n' > "$kdir/kustomization.yaml"
"$kubectl" kustomize "$kdir" > "$out/.webhook-configs.yaml.tmp"
rm -rf "$kdir"
grep -q 'name: kruise-mutating-webhook-configuration' "$out/.webhook-configs.yaml.tmp" ||
  { log "kustomize of config/webhook did not produce kruise-mutating-webhook-configuration"; exit 1; }
mv -f "$out/.webhook-configs.yaml.tmp" "$out/webhook-configs.yaml"

echo "$fingerprint" > "$stamp"
log "done: $out"
