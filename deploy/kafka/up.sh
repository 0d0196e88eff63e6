#!/usr/bin/env bash
# Brings up a single-node Apache Kafka 3.9.1 broker (KRaft, broker+controller) on 127.0.0.1.
# Idempotent: reuses a broker already answering on the port, fetches the jars from Maven Central
# only once, formats storage only once, and returns when the broker is ready.
set -euo pipefail
source "$(dirname "$0")/common.sh"

if port_open "$KAFKA_PORT"; then
  echo "kafka: already running on 127.0.0.1:$KAFKA_PORT"
  exit 0
fi

# Says what is missing in one line (`chorus start` shows it and points to `chorus doctor`).
need() {
  command -v "$1" >/dev/null 2>&1 && return 0
  echo "kafka: $1 is not on the PATH: $2, or set KAFKA_BROKERS to a running broker" >&2
  exit 1
}
need java "install Java 17 or newer"

if [ ! -f "$KAFKA_LIBS/.complete" ]; then
  need mvn "install Maven to fetch the broker's jars once"
  echo "kafka: fetching Kafka 3.9.1 jars from Maven Central (once, about 50 MB; they go to ~/.m2 too)"
  # Quiet Maven, but not a silent wait: a line every 10 s with what arrived in the local repository.
  m2=$HOME/.m2/repository
  mb_in() {
    local mb
    mb=$(du -sm "$1" 2>/dev/null | cut -f1) || true
    echo "${mb:-0}"
  }
  before=$(mb_in "$m2")
  mvn -B -q -f "$here/pom.xml" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$KAFKA_LIBS" &
  mvn_pid=$!
  waited=0
  while kill -0 "$mvn_pid" 2>/dev/null; do
    sleep 1
    waited=$((waited + 1))
    if [ $((waited % 10)) -eq 0 ]; then
      echo "kafka: still fetching ($(($(mb_in "$m2") - before)) MB so far, ${waited} s)"
    fi
  done
  wait "$mvn_pid" || { echo "kafka: Maven could not fetch the jars (see its output above)" >&2; exit 1; }
  echo "kafka: fetched $(mb_in "$KAFKA_LIBS") MB of jars in ${waited} s"
  touch "$KAFKA_LIBS/.complete"
fi

cat > "$KAFKA_HOME/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$KAFKA_HOME/data
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=12
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
min.insync.replicas=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
message.max.bytes=4194304
replica.fetch.max.bytes=4194304
PROPS

cp="$KAFKA_LIBS/*"
if [ ! -f "$KAFKA_HOME/data/meta.properties" ]; then
  echo "kafka: formatting the broker's storage (once)"
  cluster_id=$(java -cp "$cp" kafka.tools.StorageTool random-uuid 2>/dev/null)
  java -cp "$cp" kafka.tools.StorageTool format -t "$cluster_id" -c "$KAFKA_HOME/server.properties" \
    --ignore-formatted >"$KAFKA_HOME/format.log" 2>&1 || { cat "$KAFKA_HOME/format.log" >&2; exit 1; }
fi

echo "kafka: starting on 127.0.0.1:$KAFKA_PORT (log: $LOG_FILE)"
# setsid: the broker outlives the shell that started it and is not hit by its Ctrl-C.
setsid java -Xms256m -Xmx1g -XX:+UseG1GC -Dslf4j.internal.verbosity=WARN \
  -cp "$cp" kafka.Kafka "$KAFKA_HOME/server.properties" >"$LOG_FILE" 2>&1 </dev/null &
echo $! >"$PID_FILE"

# A slow start is not a failure: a JVM starting beside a busy test run can take a minute or more.
# CHORUS_KAFKA_START_TIMEOUT_S (default 180) bounds the wait; a broker that exits fails at once.
start_timeout_s=${CHORUS_KAFKA_START_TIMEOUT_S:-180}
for tick in $(seq 1 $((start_timeout_s * 2))); do
  if [ $((tick % 30)) -eq 0 ]; then echo "kafka: still starting ($((tick / 2)) s)"; fi
  if grep -q "Kafka Server started" "$LOG_FILE" 2>/dev/null && port_open "$KAFKA_PORT"; then
    echo "kafka: ready"
    exit 0
  fi
  if ! running_pid >/dev/null; then
    echo "kafka: the broker exited during start; last lines of $LOG_FILE:" >&2
    tail -n 30 "$LOG_FILE" >&2
    exit 1
  fi
  sleep 0.5
done
echo "kafka: not ready after $start_timeout_s s; see $LOG_FILE" >&2
exit 1
