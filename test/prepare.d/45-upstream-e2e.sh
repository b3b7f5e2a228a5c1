#!/usr/bin/env bash
# Builds upstream OpenKruise's own e2e suite (package test/e2e of github.com/openkruise/kruise at the version
# pinned in test/kruise-peer/versions.env) as a Go test binary, from the wrapper module test/conformance/gomod,
# into a cache directory outside git:
#
#   <dir>/kruise-e2e.test   `go test -c` of github.com/openkruise/kruise/test/e2e (CGO off, -trimpath)
#
# test/conformance/conformance.test.ts runs it against the bundled runtime on the real one-node cluster. It
# shares GOCACHE/GOMODCACHE with the peer build (20-kruise-peer.sh), which compiles most of the same packages.
# Idempotent: a complete cached build of this go.sum is reused; concurrent runs wait for one build. Works on an
# empty module cache: `go test -c` downloads what go.sum lists (-mod=readonly, so nothing else is resolved).
#
#   CDK8S_KRUISE_UPSTREAM_E2E_DIR  where to put it (default <cache home>/cdk8s-kruise/upstream-e2e/<version>)
#   KRUISE_E2E_ASSETS              a directory that already holds kruise-e2e.test: nothing is built
set -euo pipefail
module_dir="$(cd "$(dirname "$0")/../conformance/gomod" && pwd)"
# shellcheck source=../kruise-peer/versions.env
. "$(dirname "$0")/../kruise-peer/versions.env"
version="${KRUISE_VERSION:?}"
log() { echo "[upstream-e2e] $*" >&2; }
# shellcheck source=lib/k8s-build.bash
. "$(dirname "$0")/lib/k8s-build.bash"

grep -Eq "^(require)?[[:space:]]*github.com/openkruise/kruise ${version}\$" "$module_dir/go.mod" ||
  { log "$module_dir/go.mod does not require github.com/openkruise/kruise $version; run its gen-gomod.sh"; exit 1; }

out="${CDK8S_KRUISE_UPSTREAM_E2E_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-kruise/upstream-e2e/$version}"
if k8s_build_reuse_or_lock KRUISE_E2E_ASSETS kruise-e2e.test; then
  exit 0
fi

k8s_build_check_go KRUISE_E2E_ASSETS
log "building upstream OpenKruise $version e2e suite into $out"
log "the first build needs ~8 CPU-minutes (less after the peer build, which compiles the same Kubernetes packages); later runs reuse it"
rm -f "$stamp"

started=$SECONDS
# 9>&-: the ticker must not hold the build lock, or an interrupted build leaves it held for a minute.
( while sleep 60; do log "  still building kruise-e2e.test ($((SECONDS - started))s)"; done ) 9>&- &
ticker=$!
trap 'kill "$ticker" 2>/dev/null || true' EXIT
(cd "$module_dir" && CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false" \
  nice -n 10 go test -c -vet=off -p "${CONTROLPLANE_BUILD_JOBS:-2}" -trimpath -ldflags "-s -w" \
  -o "$out/.kruise-e2e.test.tmp" github.com/openkruise/kruise/test/e2e) ||
  { rm -f "$out/.kruise-e2e.test.tmp"; log "building the e2e suite failed"; exit 1; }
kill "$ticker" 2>/dev/null || true
# A binary that lists no specs would make every conformance run vacuous.
"$out/.kruise-e2e.test.tmp" --ginkgo.dry-run --ginkgo.focus-file=apps/v1alpha1/containermeta.go \
  --ginkgo.no-color >"$out/.dry-run.log" 2>&1 ||
  { log "the built e2e suite does not run (see $out/.dry-run.log)"; exit 1; }
mv -f "$out/.kruise-e2e.test.tmp" "$out/kruise-e2e.test"
log "built kruise-e2e.test in $((SECONDS - started))s ($(du -h "$out/kruise-e2e.test" | cut -f1))"
echo "$fingerprint" > "$stamp"
log "done: $out"
