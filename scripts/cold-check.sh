#!/usr/bin/env bash
# Runs the README's two commands the way a new contributor does: in a fresh clone of a commit, with empty npm,
# Go module, Go build and cdk8s-kruise caches (new temporary directories), and reports each command's wall time:
#
#   npm ci && npm run synth      (the main job)
#   npm ci && npm test           (every test)
#
# A green CI on a machine with warm caches can hide a step that fails on a fresh one; run this before calling an
# installation or prepare change done.
#
#   scripts/cold-check.sh [--synth-only|--prepare-only] [--keep] [REV]
#                  REV defaults to HEAD (commit first: the clone sees only what is committed)
#
#   --synth-only   run only the first command
#   --prepare-only run the first command, then only what the second does before its tests
#                  (npm ci && npm run check && bash test/prepare.sh): the cold part of its time
#   --keep         keep the clone and the caches (their directory is printed), e.g. to move the built
#                  binaries into the real cache afterwards
#
# Debian packages that the prepare steps install are machine-wide: they are not removed first.
set -euo pipefail
synth_only=false prepare_only=false keep=false rev=HEAD
for arg in "$@"; do
  case "$arg" in
    --synth-only) synth_only=true ;;
    --prepare-only) prepare_only=true ;;
    --keep) keep=true ;;
    -h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "cold-check: unknown option $arg (see --help)" >&2; exit 2 ;;
    *) rev="$arg" ;;
  esac
done
repo="$(cd "$(dirname "$0")/.." && pwd)"
commit="$(git -C "$repo" rev-parse --verify "$rev^{commit}")"
root="$(mktemp -d "${TMPDIR:-/tmp}/cdk8s-kruise-cold.XXXXXX")"
cleanup() {
  if $keep; then echo "[cold-check] kept $root" >&2; else chmod -R u+w "$root" 2>/dev/null || true; rm -rf "$root"; fi
}
trap cleanup EXIT
log() { echo "[cold-check] $*" >&2; }

git clone --quiet --no-hardlinks "$repo" "$root/clone"
git -C "$root/clone" checkout --quiet --detach "$commit"
mkdir -p "$root/npm-cache" "$root/gopath" "$root/go-build" "$root/xdg-cache"
export npm_config_cache="$root/npm-cache" GOPATH="$root/gopath" GOMODCACHE="$root/gopath/pkg/mod" \
  GOCACHE="$root/go-build" XDG_CACHE_HOME="$root/xdg-cache"
# Every cache location a step could fall back on is one of the new directories.
unset KUBEBUILDER_ASSETS CDK8S_KRUISE_NODE_ASSETS KRUISE_PEER_ASSETS CDK8S_KRUISE_PEER_DIR CDK8S_KRUISE_CONTROLPLANE_DIR \
  CDK8S_KRUISE_UPSTREAM_CRDS KUBECONFORM

timed() { # <label> <command...>
  local started=$SECONDS status=0
  log "$1: ${*:2} (in a clone of ${commit:0:12})"
  (cd "$root/clone" && "${@:2}") 2>&1 | tee "$root/$1.log" || status=$?
  log "$1: exit $status after $((SECONDS - started)) s"
  return "$status"
}

timed synth bash -c 'npm ci && npm run synth'
$synth_only && exit 0
if $prepare_only; then
  timed prepare bash -c 'npm ci && npm run check && bash test/prepare.sh'
  exit 0
fi
timed test bash -c 'npm ci && npm test'
