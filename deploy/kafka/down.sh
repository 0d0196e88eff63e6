#!/usr/bin/env bash
# Stops the local broker started by up.sh (SIGTERM, then waits for a clean shutdown). Idempotent.
set -euo pipefail
source "$(dirname "$0")/common.sh"

pid=$(running_pid) || { echo "kafka: not running (no broker started by up.sh)"; rm -f "$PID_FILE"; exit 0; }
kill -TERM "$pid"
for _ in $(seq 1 60); do
  kill -0 "$pid" 2>/dev/null || { rm -f "$PID_FILE"; echo "kafka: stopped"; exit 0; }
  sleep 0.5
done
echo "kafka: still running after 30 s, killing" >&2
kill -KILL "$pid" 2>/dev/null || true
rm -f "$PID_FILE"
