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

command -v go >/dev/null || { log "Go is needed to build kube-apiserver/etcd (or set KUBEBUILDER_ASSETS)"; exit 1; }
# GOTOOLCHAIN=local (no toolchain download), so the local Go must satisfy go.mod's go line.
need="$(sed -n 's/^go \([0-9]*\.[0-9]*\).*/\1/p' "$module_dir/go.mod")"
have="$(GOTOOLCHAIN=local go env GOVERSION | sed -n 's/^go\([0-9]*\.[0-9]*\).*/\1/p')"
if [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -1)" != "$need" ]; then
  log "Go >= $need is needed to build Kubernetes ${version} (found go$have); install a newer Go or set KUBEBUILDER_ASSETS"
  exit 1
fi
log "building kube-apiserver, etcd and kubectl $version into $out"
log "the first build downloads ~0.5 GB of Go modules and takes several minutes; later runs reuse it"

major="${version#v}"; major="${major%%.*}"
minor="${version#v*.}"; minor="${minor%%.*}"
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"

build() { # <name> <package>
  local name="$1" package="$2" started=$SECONDS ticker
  log "go build $package ..."
  ( while sleep 60; do log "  still building $name ($((SECONDS - started))s)"; done ) &
  ticker=$!
  if ! (cd "$module_dir" && CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false" \
        nice -n 10 go build -p "${CONTROLPLANE_BUILD_JOBS:-2}" -trimpath -ldflags "$ldflags" \
        -o "$out/.$name.tmp" "$package"); then
    kill "$ticker" 2>/dev/null; wait "$ticker" 2>/dev/null || true
    rm -f "$out/.$name.tmp"
    log "building $name failed"; return 1
  fi
  kill "$ticker" 2>/dev/null; wait "$ticker" 2>/dev/null || true
  mv -f "$out/.$name.tmp" "$out/$name"
  log "built $name in $((SECONDS - started))s ($(du -h "$out/$name" | cut -f1))"
}

rm -f "$stamp"
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver
build etcd go.etcd.io/etcd/server/v3
build kubectl k8s.io/kubernetes/cmd/kubectl
"$out/kube-apiserver" --version >&2
echo "$fingerprint" > "$stamp"
log "done: $out"
