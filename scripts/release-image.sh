#!/usr/bin/env bash
# Release step 2: build the runtime image with the command users run (`cdk8s-kruise image build` from the
# packed tarball, installed into an empty directory: no checkout involved), push it and attach its SPDX SBOM.
# Prints the pushed reference (repository:tag@digest) on stdout.
#
#   scripts/release-image.sh <package tarball> <image repository, e.g. ghcr.io/cdk8s-kruise/cdk8s-kruise>
#
# EXPECT_DIGEST: fail unless the image has this manifest digest (the repository's own build, `npm run image`).
# DOCKER_CONFIG: where the push credentials are (docker config.json), as for docker.
set -euo pipefail
tarball="${1:?usage: release-image.sh <tarball> <image repository>}"
repository="${2:?usage: release-image.sh <tarball> <image repository>}"
tarball="$(cd "$(dirname "$tarball")" && pwd)/$(basename "$tarball")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
printf '{ "name": "release-image", "private": true }\n' > package.json
npm install --no-audit --no-fund --silent --omit=peer "$tarball" >&2
version="$(node -p 'require("cdk8s-kruise/package.json").version')"
expect=()
[ -n "${EXPECT_DIGEST:-}" ] && expect=(--expect-digest "$EXPECT_DIGEST")
# With EXPECT_DIGEST the command refuses, before pushing anything, an image that differs from the repository build.
npx --no-install cdk8s-kruise image build --push "$repository:$version" --sbom "$work/sbom.spdx.json" "${expect[@]}" --json > result.json
node -p 'const r = require("./result.json"); `${r.pushed.reference}\nsbom ${r.pushed.sbom}`'
