#!/usr/bin/env bash
# Copies upstream OpenKruise's CRDs (config/crd/bases of github.com/openkruise/kruise at the version pinned
# in test/kruise-peer/versions.env) into a cache directory outside git. The unit tests that compare our CRDs
# and schemas with upstream's read them from there (test/unit/support/upstream-crds.ts). Only that one module
# is downloaded (a few MB through the Go module proxy), nothing is built. Idempotent.
#
#   CDK8S_KRUISE_UPSTREAM_CRDS  where to put them
#                               (default ${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-kruise/upstream-crds/<version>)
set -euo pipefail
module_dir="$(cd "$(dirname "$0")/../kruise-peer" && pwd)"
# shellcheck source=../kruise-peer/versions.env
. "$module_dir/versions.env"
version="${KRUISE_VERSION:?}"
log() { echo "[upstream-crds] $*" >&2; }
# shellcheck source=lib/kruise-module.bash
. "$(dirname "$0")/lib/kruise-module.bash"

out="${CDK8S_KRUISE_UPSTREAM_CRDS:-${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-kruise/upstream-crds/$version}"
[ -f "$out/.complete" ] && exit 0
command -v go >/dev/null || { log "Go is needed to download github.com/openkruise/kruise $version"; exit 1; }
src="$(kruise_module_dir)"
mkdir -p "$(dirname "$out")"
tmp="$(mktemp -d "$(dirname "$out")/.upstream-crds.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
cp "$src"/config/crd/bases/*.yaml "$tmp/" && chmod -R u+w "$tmp"
touch "$tmp/.complete"
rm -rf "$out" && mv "$tmp" "$out"
log "$(find "$out" -name '*.yaml' | wc -l) CRDs of $version in $out"
