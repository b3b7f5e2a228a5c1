#!/usr/bin/env bash
# Real CRI parts for the daemon's e2e tests: containerd (with its CRI plugin and runc), a registry
# (docker-registry, with htpasswd from apache2-utils for the pull-secret case) and the offline image
# tools (umoci + skopeo build and push test images from busybox-static). Idempotent: apt runs only
# when a tool is missing.
set -euo pipefail
need=()
for pair in containerd:containerd runc:runc docker-registry:docker-registry htpasswd:apache2-utils \
  umoci:umoci skopeo:skopeo; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}")
done
dpkg -s busybox-static >/dev/null 2>&1 || need+=(busybox-static)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "[30-cri] installing: ${need[*]}" >&2
  $sudo flock /tmp/apt.lock apt-get update -q >/dev/null
  $sudo env DEBIAN_FRONTEND=noninteractive flock /tmp/apt.lock apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
fi
# The Debian packages start system services; the tests run their own private instances.
for svc in containerd docker-registry; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$svc" 2>/dev/null; then
    systemctl disable --now "$svc" >/dev/null 2>&1 || true
  fi
done
echo "[30-cri] ok: containerd $(containerd --version | awk '{print $3}'), runc, docker-registry, umoci, skopeo, busybox-static" >&2
