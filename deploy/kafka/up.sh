#!/usr/bin/env bash
# Brings up Apache Kafka 3.9.1 in KRaft mode on 127.0.0.1: one node (broker and controller in one
# process) by default, or a replicated cluster of CHORUS_KAFKA_NODES such nodes (common.sh).
# Idempotent: reuses a node already answering on its port, fetches the jars from Maven Central only
# once, formats storage only once, and returns when every node it started is ready.
set -euo pipefail
source "$(dirname "$0")/common.sh"

to_start=()
for n in $SELECTED_NODES; do
  if port_open "$(node_port "$n")"; then
    echo "$(node_name "$n"): already running on 127.0.0.1:$(node_port "$n")"
  else
    to_start+=("$n")
  fi
done
[ ${#to_start[@]} -eq 0 ] && exit 0

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
cp="$KAFKA_LIBS/*"

# Class data sharing: the classes a broker loads to start, archived once per Java build and set of
# jars, so that later JVMs map them instead of loading and verifying each (a broker's start took
# 2.4-2.8 CPU-s here instead of 4.3-4.7, and a second less). The first start lists its classes;
# once it is ready, a JVM in the background makes the archive from that list (8 CPU-s, once). A JVM
# whose archive does not match its classpath runs without it.
cds_dir=$KAFKA_LIBS/cds
mkdir -p "$cds_dir"
java_bin=$(readlink -f "$(command -v java)")
cds_key=$( (echo "$java_bin"; stat -c %Y "$java_bin"; ls -l "$KAFKA_LIBS"/*.jar) | cksum | cut -d' ' -f1)
cds_archive=$cds_dir/kafka-$cds_key.jsa
cds_list=$cds_dir/classes-$cds_key.list
cds_opts=()
listing=""
if [ -s "$cds_archive" ]; then
  cds_opts=("-XX:SharedArchiveFile=$cds_archive")
elif [ ! -s "$cds_list" ]; then
  listing=$(node_home "${to_start[0]}")/classes.list
fi

# Replication: 3 copies with 2 in sync for an acknowledged write once there are 3 nodes (what a
# managed cluster gives), as many as there are nodes below that.
replicas=$((KAFKA_NODES < 3 ? KAFKA_NODES : 3))
min_isr=$((replicas >= 3 ? 2 : 1))
voters=""
for n in $(seq 1 "$KAFKA_NODES"); do voters="$voters${voters:+,}$n@127.0.0.1:$(node_controller_port "$n")"; done
# One JVM needs a larger heap than each of three sharing the machine.
heap=${CHORUS_KAFKA_HEAP:-$([ "$KAFKA_NODES" -eq 1 ] && echo 1g || echo 384m)}

# The nodes of one cluster share its id, made once: 16 random bytes in unpadded base64url, as
# `kafka-storage random-uuid` prints it (without a JVM started for it), never beginning with a dash.
cluster_id_file=$KAFKA_HOME/cluster.id
if [ ! -s "$cluster_id_file" ]; then
  id=-
  while [ "${id#-}" != "$id" ]; do id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '='); done
  echo "$id" >"$cluster_id_file"
fi
cluster_id=$(cat "$cluster_id_file")

for n in "${to_start[@]}"; do
  home=$(node_home "$n")
  mkdir -p "$home"
  cat >"$home/server.properties" <<PROPS
process.roles=broker,controller
node.id=$n
controller.quorum.voters=$voters
listeners=PLAINTEXT://127.0.0.1:$(node_port "$n"),CONTROLLER://127.0.0.1:$(node_controller_port "$n")
advertised.listeners=PLAINTEXT://127.0.0.1:$(node_port "$n")
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$home/data
num.partitions=1
default.replication.factor=$replicas
min.insync.replicas=$min_isr
offsets.topic.replication.factor=$replicas
offsets.topic.num.partitions=12
transaction.state.log.replication.factor=$replicas
transaction.state.log.min.isr=$min_isr
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
message.max.bytes=4194304
replica.fetch.max.bytes=4194304
PROPS
  # Tests add listeners (TLS, SASL) or settings: the file's lines come last, so they win.
  if [ -n "${CHORUS_KAFKA_EXTRA_CONFIG:-}" ]; then
    sed "s/{{node}}/$n/g; s/{{port}}/$(node_port "$n")/g; s/{{controller_port}}/$(node_controller_port "$n")/g" \
      "$CHORUS_KAFKA_EXTRA_CONFIG" >>"$home/server.properties"
  fi
  if [ ! -f "$home/data/meta.properties" ]; then
    echo "$(node_name "$n"): formatting its storage (once)"
    # CHORUS_KAFKA_FORMAT_ARGS: more for the format, such as SCRAM users (--add-scram …).
    # shellcheck disable=SC2086
    java ${cds_opts[@]+"${cds_opts[@]}"} -cp "$cp" kafka.tools.StorageTool format -t "$cluster_id" -c "$home/server.properties" \
      --ignore-formatted ${CHORUS_KAFKA_FORMAT_ARGS:-} >"$home/format.log" 2>&1 || { cat "$home/format.log" >&2; exit 1; }
  fi
  log_file=$(node_log_file "$n")
  echo "$(node_name "$n"): starting on 127.0.0.1:$(node_port "$n") (log: $log_file)"
  class_opts=("${cds_opts[@]+"${cds_opts[@]}"}")
  [ "$n" = "${to_start[0]}" ] && [ -n "$listing" ] && class_opts=("-XX:DumpLoadedClassList=$listing")
  # setsid: the broker outlives the shell that started it and is not hit by its Ctrl-C.
  # shellcheck disable=SC2086 # CHORUS_KAFKA_JAVA_OPTS is a list of options
  setsid java "-Xms${CHORUS_KAFKA_HEAP_MIN:-128m}" "-Xmx$heap" -XX:+UseG1GC -Dslf4j.internal.verbosity=WARN \
    -Dorg.slf4j.simpleLogger.showDateTime=true "-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd HH:mm:ss.SSS" \
    ${class_opts[@]+"${class_opts[@]}"} ${CHORUS_KAFKA_JAVA_OPTS:-} -cp "$cp" kafka.Kafka "$home/server.properties" \
    >"$log_file" 2>&1 </dev/null &
  echo $! >"$(node_pid_file "$n")"
done

# Once a broker that listed its classes is ready: the list kept, and the archive made from it in the
# background, by one JVM at a time (flock), written aside and moved in place once whole.
archive_classes() {
  [ -s "$cds_archive" ] && return 0
  if [ -n "$listing" ] && [ -s "$listing" ]; then
    cp "$listing" "$cds_list.$$" && mv -f "$cds_list.$$" "$cds_list"
  fi
  [ -s "$cds_list" ] || return 0
  (
    flock -n 9 || exit 0
    java -Xshare:dump "-XX:SharedClassListFile=$cds_list" "-XX:SharedArchiveFile=$cds_archive.$$" -cp "$cp" \
      >"$cds_dir/dump.log" 2>&1 && mv -f "$cds_archive.$$" "$cds_archive"
    rm -f "$cds_archive.$$"
  ) 9>"$cds_dir/dump.lock" </dev/null >/dev/null 2>&1 &
}

# Started together: in a cluster a node is ready only once a majority of the controllers answer.
# A slow start is not a failure: a JVM starting beside a busy test run can take a minute or more.
# CHORUS_KAFKA_START_TIMEOUT_S (default 180) bounds the wait; a broker that exits fails at once.
start_timeout_s=${CHORUS_KAFKA_START_TIMEOUT_S:-180}
waiting=("${to_start[@]}")
for tick in $(seq 1 $((start_timeout_s * 2))); do
  if [ $((tick % 30)) -eq 0 ]; then echo "kafka: still starting ($((tick / 2)) s)"; fi
  still=()
  for n in "${waiting[@]}"; do
    if grep -q "Kafka Server started" "$(node_log_file "$n")" 2>/dev/null && port_open "$(node_port "$n")"; then
      echo "$(node_name "$n"): ready"
    elif ! running_pid "$n" >/dev/null; then
      echo "$(node_name "$n"): the broker exited during start; last lines of $(node_log_file "$n"):" >&2
      tail -n 30 "$(node_log_file "$n")" >&2
      exit 1
    else
      still+=("$n")
    fi
  done
  if [ ${#still[@]} -eq 0 ]; then
    [ "$KAFKA_NODES" -gt 1 ] && echo "kafka: KAFKA_BROKERS=$(bootstrap_servers)"
    archive_classes
    exit 0
  fi
  waiting=("${still[@]}")
  sleep 0.5
done
echo "kafka: not ready after $start_timeout_s s: $(for n in "${waiting[@]}"; do node_name "$n"; done | paste -sd,)" >&2
exit 1
