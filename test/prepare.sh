#!/usr/bin/env bash
# Installs and builds everything the test suite needs that npm does not: each step is a script in
# test/prepare.d/, run in name order, idempotent and cached (a second run is fast).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
for step in "$here"/prepare.d/*.sh; do
  [ -e "$step" ] || continue
  echo "[prepare] $(basename "$step")" >&2
  bash "$step"
done
