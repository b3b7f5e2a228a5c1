#!/usr/bin/env bash
# Builds kubeconform (the validator `cdk8s-kruise validate` is compared with: test/harness/kubeconform.ts, the
# finding-superset e2e test and bench/validate-kubeconform.bench.ts) from Go modules into a cache directory
# outside git: ${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-kruise/kubeconform/<version>/kubeconform. Idempotent;
# concurrent runs wait for one build.
#
#   KUBECONFORM   a kubeconform binary to use instead: nothing is built
set -euo pipefail
# The version is declared once, in the harness that runs it.
version="$(sed -n "s/^export const KUBECONFORM_VERSION = '\(v[0-9.]*\)';$/\1/p" "$(dirname "$0")/../harness/kubeconform.ts")"
[ -n "$version" ] || { echo "[kubeconform] KUBECONFORM_VERSION not found in test/harness/kubeconform.ts" >&2; exit 1; }
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
