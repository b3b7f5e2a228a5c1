#!/usr/bin/env bash
# Tools of the offline runtime image build and its smoke test (test/e2e/image.test.ts): ldd and
# dpkg-query (always on Debian), strip (binutils), the CA bundle (ca-certificates), and umoci + skopeo,
# the independent OCI implementations the test unpacks and inspects the image with, and a registry
# (docker-registry) to push it to. Idempotent: apt
# runs only when something is missing.
set -euo pipefail
need=()
for pair in strip:binutils umoci:umoci skopeo:skopeo chroot:coreutils docker-registry:docker-registry; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}")
done
[ -s /etc/ssl/certs/ca-certificates.crt ] || need+=(ca-certificates)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "[40-image] installing: ${need[*]}" >&2
  $sudo flock /tmp/apt.lock apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo flock /tmp/apt.lock apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
fi
echo "[40-image] ok: $(strip --version | head -1), umoci $(umoci --version | awk '{print $3}'), skopeo $(skopeo --version | awk '{print $3}')" >&2
