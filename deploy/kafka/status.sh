#!/usr/bin/env bash
# Says, for each local node, whether a broker answers on its port; exits 0 when all do, 1 otherwise.
# `npx chorus status` tells more: each topic's leaders, in-sync replicas and under-replicated
# partitions.
set -euo pipefail
source "$(dirname "$0")/common.sh"

status=0
for n in $SELECTED_NODES; do
  if port_open "$(node_port "$n")"; then
    echo "$(node_name "$n"): running on 127.0.0.1:$(node_port "$n") (pid $(running_pid "$n" || echo 'not ours'))"
  else
    echo "$(node_name "$n"): not running"
    status=1
  fi
done
exit $status
