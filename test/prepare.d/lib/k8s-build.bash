# Shared by the prepare steps that build Kubernetes binaries from test/controlplane/go.mod (sourced,
# not run: prepare.sh only runs test/prepare.d/*.sh). Expects module_dir, out and version to be set
# and a log function to exist; k8s_build_reuse_or_lock sets stamp and fingerprint.

# GOTOOLCHAIN=local (no toolchain download), so the local Go must satisfy go.mod's go line.
k8s_build_check_go() {
  command -v go >/dev/null || { log "Go is needed to build Kubernetes $version (or set $1)"; return 1; }
  local need have
  need="$(sed -n 's/^go \([0-9]*\.[0-9]*\).*/\1/p' "$module_dir/go.mod")"
  have="$(GOTOOLCHAIN=local go env GOVERSION | sed -n 's/^go\([0-9]*\.[0-9]*\).*/\1/p')"
  if [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -1)" != "$need" ]; then
    log "Go >= $need is needed to build Kubernetes ${version} (found go$have); install a newer Go or set $1"
    return 1
  fi
}

k8s_build_ldflags() {
  local major minor pkg=k8s.io/component-base/version
  major="${version#v}"; major="${major%%.*}"
  minor="${version#v*.}"; minor="${minor%%.*}"
  echo "-s -w -X $pkg.gitVersion=$version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
}

k8s_build() { # <name> <package>
  local name="$1" package="$2" started=$SECONDS ticker ldflags
  ldflags="$(k8s_build_ldflags)"
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

# Decides whether a build is needed: returns 0 ("skip") when the assets variable named by $1 points at a
# directory holding every binary named after it, or when $out holds a complete build of this go.sum;
# otherwise takes $out's lock (fd 9, held until the script exits; a concurrent build is waited for, then
# its result reused) and returns 1. Sets stamp and fingerprint for the caller.
k8s_build_reuse_or_lock() { # <assets variable> <binary...>
  local assets_var="$1" bin
  shift
  local assets="${!assets_var:-}"
  if [ -n "$assets" ]; then
    for bin in "$@"; do
      [ -x "$assets/$bin" ] || { log "$assets_var=$assets has no executable $bin"; exit 1; }
    done
    log "using $assets_var=$assets, nothing to build"
    return 0
  fi
  stamp="$out/.complete"
  fingerprint="$(sha256sum "$module_dir/go.sum" | cut -d' ' -f1)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$fingerprint" ]; then
    log "reusing $version binaries in $out"
    return 0
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
    return 0
  fi
  return 1
}
