# Shared settings of the local Kafka scripts (sourced, not run).
#
# One node (the default) keeps everything under KAFKA_HOME (default: <repo>/.local/kafka): libs/,
# data/, server.properties, kafka.log and kafka.pid, on ports 9092 (clients) and 9093 (controller).
# CHORUS_KAFKA_NODES=3 runs a replicated cluster instead: node N keeps its files in
# KAFKA_HOME/node-N/ and listens on 9092+2(N-1) and 9093+2(N-1) (9092, 9094, 9096 for clients),
# unless CHORUS_KAFKA_PORTS and CHORUS_KAFKA_CONTROLLER_PORTS list the ports (comma-separated, one per
# node). CHORUS_KAFKA_NODE=N makes up.sh, down.sh and status.sh act on that node alone (a rolling
# restart stops and starts one node at a time).
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KAFKA_HOME=${CHORUS_KAFKA_HOME:-$here/../../.local/kafka}
KAFKA_PORT=${CHORUS_KAFKA_PORT:-9092}
KAFKA_CONTROLLER_PORT=${CHORUS_KAFKA_CONTROLLER_PORT:-9093}
KAFKA_NODES=${CHORUS_KAFKA_NODES:-1}
case "$KAFKA_NODES" in
  '' | *[!0-9]* | 0) echo "kafka: CHORUS_KAFKA_NODES must be a positive whole number, not '$KAFKA_NODES'" >&2; exit 2 ;;
esac
mkdir -p "$KAFKA_HOME"
KAFKA_HOME=$(cd "$KAFKA_HOME" && pwd)
# Jars may be shared between several brokers (tests start others): CHORUS_KAFKA_LIBS.
KAFKA_LIBS=${CHORUS_KAFKA_LIBS:-$KAFKA_HOME/libs}

IFS=, read -r -a client_ports <<<"${CHORUS_KAFKA_PORTS:-}"
IFS=, read -r -a controller_ports <<<"${CHORUS_KAFKA_CONTROLLER_PORTS:-}"

# The nodes the command acts on: CHORUS_KAFKA_NODE alone, or all of them.
if [ -n "${CHORUS_KAFKA_NODE:-}" ]; then
  if ! [[ "$CHORUS_KAFKA_NODE" =~ ^[1-9][0-9]*$ ]] || [ "$CHORUS_KAFKA_NODE" -gt "$KAFKA_NODES" ]; then
    echo "kafka: CHORUS_KAFKA_NODE must be between 1 and $KAFKA_NODES, not '$CHORUS_KAFKA_NODE'" >&2
    exit 2
  fi
  SELECTED_NODES=$CHORUS_KAFKA_NODE
else
  SELECTED_NODES=$(seq 1 "$KAFKA_NODES")
fi

node_port() { echo "${client_ports[$(($1 - 1))]:-$((KAFKA_PORT + 2 * ($1 - 1)))}"; }
node_controller_port() { echo "${controller_ports[$(($1 - 1))]:-$((KAFKA_CONTROLLER_PORT + 2 * ($1 - 1)))}"; }
node_home() {
  if [ "$KAFKA_NODES" -eq 1 ]; then echo "$KAFKA_HOME"; else echo "$KAFKA_HOME/node-$1"; fi
}
node_pid_file() { echo "$(node_home "$1")/kafka.pid"; }
node_log_file() { echo "$(node_home "$1")/kafka.log"; }
# How the node is named in messages: "kafka" alone, "kafka node 2" in a cluster.
node_name() {
  if [ "$KAFKA_NODES" -eq 1 ]; then echo "kafka"; else echo "kafka node $1"; fi
}

# Every client address of the cluster, comma-separated: what KAFKA_BROKERS names.
bootstrap_servers() {
  local n list=""
  for n in $(seq 1 "$KAFKA_NODES"); do list="$list${list:+,}127.0.0.1:$(node_port "$n")"; done
  echo "$list"
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# The pid of the broker up.sh started for node $1, while it runs.
running_pid() {
  local pid_file; pid_file=$(node_pid_file "$1")
  [ -f "$pid_file" ] || return 1
  local pid; pid=$(cat "$pid_file")
  kill -0 "$pid" 2>/dev/null && echo "$pid"
}
