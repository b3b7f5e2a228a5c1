#!/usr/bin/env bash
# Debian packages the real node needs on top of the CRI parts (30-cri.sh): the CNI plugins (bridge,
# host-local, loopback) for pod networking, iptables and conntrack for kube-proxy's iptables mode.
# Idempotent: apt runs only when something is missing.
set -euo pipefail
need=()
[ -x /usr/lib/cni/bridge ] || need+=(containernetworking-plugins)
command -v iptables >/dev/null 2>&1 || need+=(iptables)
command -v conntrack >/dev/null 2>&1 || need+=(conntrack)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "[35-node-packages] installing: ${need[*]}" >&2
  $sudo flock /tmp/apt.lock apt-get update -q >/dev/null
  $sudo env DEBIAN_FRONTEND=noninteractive flock /tmp/apt.lock apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
fi
echo "[35-node-packages] ok: CNI plugins in /usr/lib/cni, $(iptables --version), conntrack" >&2
