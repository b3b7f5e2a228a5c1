#!/usr/bin/env bash
# Release step 1: pack the npm package (`npm pack` runs `prepare`, the package build, image kit included) and
# publish that tarball with provenance. The tarball path is printed on stdout, for release-image.sh.
#
#   scripts/release-package.sh <out-dir>
#
# RELEASE_DRY_RUN=1 packs and runs `npm publish --dry-run` (no provenance: it needs the forge's OIDC token),
# which is what the tests do. NPM_REGISTRY overrides the registry published to.
set -euo pipefail
out="${1:?usage: release-package.sh <out-dir>}"
mkdir -p "$out"
tarball="$(npm pack --silent --pack-destination "$out" | tail -n 1)"
tarball="$out/$tarball"
[ -s "$tarball" ] || { echo "release-package: npm pack wrote no tarball" >&2; exit 1; }
registry=()
[ -n "${NPM_REGISTRY:-}" ] && registry=(--registry "$NPM_REGISTRY")
if [ "${RELEASE_DRY_RUN:-0}" = 1 ]; then
  npm publish "$tarball" --dry-run --access public "${registry[@]}" >&2
else
  npm publish "$tarball" --provenance --access public "${registry[@]}" >&2
fi
echo "$tarball"
