#!/usr/bin/env bash
# Exit 0 and say so when a broker answers on the local port, 1 otherwise.
set -euo pipefail
source "$(dirname "$0")/common.sh"

if port_open "$KAFKA_PORT"; then
  echo "kafka: running on 127.0.0.1:$KAFKA_PORT${PID_FILE:+ (pid $(running_pid || echo 'not ours'))}"
  exit 0
fi
echo "kafka: not running"
exit 1
