# Shared settings of the local Kafka scripts (sourced, not run).
# Everything lives under KAFKA_HOME (default: <repo>/.local/kafka): libs/, data/, server.properties,
# kafka.log and kafka.pid. Ports default to 9092 (clients) and 9093 (controller), loopback only.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KAFKA_HOME=${CHORUS_KAFKA_HOME:-$here/../../.local/kafka}
KAFKA_PORT=${CHORUS_KAFKA_PORT:-9092}
KAFKA_CONTROLLER_PORT=${CHORUS_KAFKA_CONTROLLER_PORT:-9093}
mkdir -p "$KAFKA_HOME"
KAFKA_HOME=$(cd "$KAFKA_HOME" && pwd)
# Jars may be shared between several brokers (tests start a second one): CHORUS_KAFKA_LIBS.
KAFKA_LIBS=${CHORUS_KAFKA_LIBS:-$KAFKA_HOME/libs}
PID_FILE=$KAFKA_HOME/kafka.pid
LOG_FILE=$KAFKA_HOME/kafka.log

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

running_pid() {
  [ -f "$PID_FILE" ] || return 1
  local pid; pid=$(cat "$PID_FILE")
  kill -0 "$pid" 2>/dev/null && echo "$pid"
}
