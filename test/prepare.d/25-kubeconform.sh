#!/usr/bin/env bash
# Builds kubeconform (the validator `cdk8s-kruise validate` is compared with: test/harness/kubeconform.ts, the
# finding-superset e2e test and bench/validate-kubeconform.bench.ts) from Go modules into a cache directory
# outside git: ${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-kruise/kubeconform/<version>/kubeconform. Idempotent;
# concurrent runs wait for one build.
#
#   KUBECONFORM   a kubeconform binary to use instead: nothing is built
set -euo pipefail
version=v0.7.0 # keep in step with KUBECONFORM_VERSION in test/harness/kubeconform.ts
log() { echo "[kubeconform] $*" >&2; }
if [ -n "${KUBECONFORM:-}" ]; then
  [ -x "$KUBECONFORM" ] || { log "KUBECONFORM=$KUBECONFORM is not executable"; exit 1; }
  exit 0
fi
out="${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-kruise/kubeconform/$version"
[ -x "$out/kubeconform" ] && exit 0
command -v go >/dev/null || { log "Go is needed to build kubeconform $version (or set KUBECONFORM)"; exit 1; }
mkdir -p "$out"
exec 9>"$out/.lock"
flock 9
[ -x "$out/kubeconform" ] && exit 0
log "building kubeconform $version from Go modules into $out"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 GOBIN="$tmp" GOFLAGS="-mod=mod -buildvcs=false" nice -n 10 \
  go install -trimpath -ldflags "-s -w" "github.com/yannh/kubeconform/cmd/kubeconform@$version"
mv -f "$tmp/kubeconform" "$out/kubeconform"
log "done: $out/kubeconform"
