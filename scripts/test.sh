#!/usr/bin/env bash
# `npm test` after its pretest (checks, prepare): the unit tier, then the end-to-end and node tiers at the same time.
# The node tier is two vitest projects in sequence: `node` (one real node) and then `nodes` (three real nodes); each
# takes the machine's real-node lock in its globalSetup, so they run in separate processes, one after the other.
#
# Vitest runs the files of every project that turns file parallelism off in one queue, one file at a time; the
# end-to-end tier (its own etcd + kube-apiserver, containerd and registries) and the node tier (a one-node cluster
# in a network namespace of its own) share no part, so each gets a vitest process of its own and the two queues
# run side by side. Their lines carry the tier's name; the exit status is the first failure's.
#
#   bash scripts/test.sh                 every tier
#   bash scripts/test.sh <vitest args>   one plain `vitest run <args>` (a file, a --project, a -t filter)
set -uo pipefail
cd "$(dirname "$0")/.."
PATH="$PWD/node_modules/.bin:$PATH"

if [ "$#" -gt 0 ]; then exec vitest run "$@"; fi

vitest run --project unit || exit

# Each tier's output is also kept, so a failing tier's summary can be printed again at the end: the two tiers'
# lines interleave, and a CI log that keeps only its tail would otherwise not show which test failed.
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

# One tier's output, each line prefixed with its name, written as it comes; returns vitest's exit status.
tier() { # <name>
  vitest run --project "$1" 2>&1 | tee "$logs/$1" | sed -u "s/^/[$1] /"
  return "${PIPESTATUS[0]}"
}

# A failed tier's failing tests and their first error lines (vitest's summary, from its "Failed Tests" block on).
failures() { # <name>
  sed -n '/Failed Tests [0-9]/,$p' "$logs/$1" | grep -E 'FAIL|Error|expected|Expected|Received|❯ test/' | head -60 | sed "s/^/[$1 failed] /"
}

started=$SECONDS
tier e2e &
e2e=$!
# The node tier's queue: `nodes` runs whatever `node` did, each status kept for the summary.
( tier node; echo $? >"$logs/node.status"; nodes_started=$SECONDS; tier nodes; echo $? >"$logs/nodes.status"; echo "[nodes] the nodes project took $((SECONDS - nodes_started)) s" ) &
node=$!
wait "$e2e"
e2e_status=$?
wait "$node"
node_status=$(cat "$logs/node.status" 2>/dev/null || echo 1)
nodes_status=$(cat "$logs/nodes.status" 2>/dev/null || echo 1)
[ "$e2e_status" -eq 0 ] || failures e2e
[ "$node_status" -eq 0 ] || failures node
[ "$nodes_status" -eq 0 ] || failures nodes
echo "[tiers] e2e exit ${e2e_status}, node exit ${node_status}, nodes exit ${nodes_status}, $((SECONDS - started)) s side by side"
[ "$e2e_status" -eq 0 ] || exit "$e2e_status"
[ "$node_status" -eq 0 ] || exit "$node_status"
exit "$nodes_status"
