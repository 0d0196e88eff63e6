#!/usr/bin/env bash
# Stops the local brokers started by up.sh (SIGTERM: a controlled shutdown, which hands the node's
# partition leaderships to the others first; then waits for it). Idempotent.
# CHORUS_KAFKA_SIGNAL=KILL stops them as a crash would (kill -9), for tests of broker loss.
set -euo pipefail
source "$(dirname "$0")/common.sh"

signal=${CHORUS_KAFKA_SIGNAL:-TERM}
stopping=()
for n in $SELECTED_NODES; do
  if pid=$(running_pid "$n"); then
    kill "-$signal" "$pid"
    stopping+=("$n:$pid")
  else
    echo "$(node_name "$n"): not running (no broker started by up.sh)"
    rm -f "$(node_pid_file "$n")"
  fi
done

for entry in ${stopping[@]+"${stopping[@]}"}; do
  n=${entry%%:*}
  pid=${entry#*:}
  for _ in $(seq 1 60); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "$(node_name "$n"): still running after 30 s, killing" >&2
    kill -KILL "$pid" 2>/dev/null || true
  else
    echo "$(node_name "$n"): stopped"
  fi
  rm -f "$(node_pid_file "$n")"
done
