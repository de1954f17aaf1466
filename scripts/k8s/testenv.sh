#!/usr/bin/env bash
# A throwaway Kubernetes control plane (etcd + kube-apiserver, no kubelets) on 127.0.0.1
# for Gantry's integration tests and benchmarks.
#
#   testenv.sh start DIR              start etcd + kube-apiserver; write DIR/kubeconfig, DIR/env
#   testenv.sh stop DIR               stop every process this script started in DIR (idempotent)
#   testenv.sh restart-apiserver DIR  stop and start kube-apiserver only, on the same port
#   testenv.sh stop-apiserver DIR     stop kube-apiserver only (etcd keeps the data)
#   testenv.sh start-apiserver DIR    start it again on the same port (after stop-apiserver)
#   testenv.sh start-scheduler DIR [ARGS...]  start the upstream kube-scheduler (baseline)
#   testenv.sh start-kwok DIR [ARGS...]       start kwok (keeps nodes Ready, pods Running)
#   testenv.sh start-controller-manager DIR [ARGS...]  start kube-controller-manager with
#                                     only the PV controller (persistentvolume-binder)
#                                     unless ARGS name --controllers=...
#   testenv.sh start-ray-operator DIR [ARGS...]  start KubeRay's operator (build-operators.sh)
#   testenv.sh start-kueue DIR CONFIG [ARGS...]  start Kueue's controller manager (same)
#   testenv.sh start-karpenter DIR TYPES [ARGS...]  start Karpenter with its kwok provider
#                                     and the instance types of the JSON file TYPES (same)
#   testenv.sh status DIR             print which processes are running
#
# After `start`, `. DIR/env` exports KUBECONFIG, GANTRY_APISERVER_URL, GANTRY_TOKEN,
# GANTRY_CA_FILE, GANTRY_ETCD_URL and the pids. Logs: DIR/*.log. Pids: DIR/*.pid.
#
# Environment:
#   GANTRY_K8S_BIN              bin dir with the binaries (default: built/cached by
#                               build-binaries.sh next to this script)
#   GANTRY_TESTENV_TIMEOUT      seconds to wait for readiness (default 90)
#   GANTRY_APISERVER_EXTRA_ARGS extra kube-apiserver flags (word-split), kept for restarts
#   GANTRY_ETCD_EXTRA_ARGS      extra etcd flags (word-split)
#   GANTRY_OPERATORS_DIR        dir with bin/ray-operator, bin/kueue, bin/karpenter-kwok
#                               (default: built/cached by build-operators.sh next to this
#                               script)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TIMEOUT=${GANTRY_TESTENV_TIMEOUT:-90}

die() { echo "testenv: $*" >&2; exit 1; }
log() { echo "testenv: $*" >&2; }

usage() {
  sed -n '2,31p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# ---- helpers ---------------------------------------------------------------------------

bin_dir() {
  if [ -n "${GANTRY_K8S_BIN:-}" ]; then
    echo "$GANTRY_K8S_BIN"
  else
    "$HERE/build-binaries.sh" | tail -1
  fi
}

operators_dir() {
  if [ -n "${GANTRY_OPERATORS_DIR:-}" ]; then
    echo "$GANTRY_OPERATORS_DIR"
  else
    "$HERE/build-operators.sh" | tail -1
  fi
}

# N free TCP ports on 127.0.0.1, distinct, outside the kernel's ephemeral range when
# possible (so an outgoing connection cannot grab one between this check and the bind).
free_ports() {
  local n=$1
  if command -v python3 >/dev/null 2>&1; then
    python3 - "$n" <<'EOF'
import random, socket, sys
n = int(sys.argv[1])
held, ports = [], []
for _ in range(2000):
    if len(ports) == n:
        break
    p = random.randrange(20000, 32000)
    if p in ports:
        continue
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", p))
    except OSError:
        s.close()
        continue
    held.append(s)
    ports.append(p)
while len(ports) < n:  # fall back to kernel-assigned ports
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    held.append(s)
    ports.append(s.getsockname()[1])
print(" ".join(map(str, ports)))
EOF
  else
    local out=() p
    while [ ${#out[@]} -lt "$n" ]; do
      p=$((20000 + RANDOM % 12000))
      [[ " ${out[*]} " == *" $p "* ]] && continue
      if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then out+=("$p"); fi
    done
    echo "${out[*]}"
  fi
}

# Is PID alive and running the binary NAME (guards against pid reuse)?
pid_is() {
  local pid=$1 name=$2 arg0
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
  arg0=$(tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | head -1) || return 1
  [ "$(basename -- "$arg0")" = "$name" ]
}

# Is PID (a child just launched) still running? Unlike pid_is, true also in the instant
# between fork and exec, when its cmdline is still the forking shell's.
alive() {
  local st
  st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null) || return 1
  [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# Stop the process recorded in DIR/NAME.pid, if it is still ours. Idempotent.
stop_proc() {
  local name=$1 pidf="$D/$1.pid" pid
  [ -f "$pidf" ] || return 0
  pid=$(cat "$pidf" 2>/dev/null || true)
  if pid_is "$pid" "$name"; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do  # up to 10 s
      pid_is "$pid" "$name" || break
      sleep 0.1
    done
    if pid_is "$pid" "$name"; then
      log "$name ($pid) ignored SIGTERM; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do pid_is "$pid" "$name" || break; sleep 0.1; done
    fi
    # Reap it when it is our own child (only possible within one invocation).
    wait "$pid" 2>/dev/null || true
  fi
  rm -f "$pidf"
}

# Start BIN/NAME with ARGS in the background, logs appended to DIR/NAME.log; sets PID.
launch() {
  local name=$1; shift
  echo "==== $(date -u +%Y-%m-%dT%H:%M:%SZ) starting $name $*" >>"$D/$name.log"
  "$BIN/$name" "$@" </dev/null >>"$D/$name.log" 2>&1 &
  PID=$!
  echo "$PID" >"$D/$name.pid"
}

log_tail() {
  local f
  for f in "$@"; do
    [ -f "$D/$f.log" ] || continue
    echo "---- last lines of $D/$f.log ----" >&2
    tail -n 30 "$D/$f.log" >&2
  done
}

# wait_until NAME PID CMD...: poll CMD until it succeeds, the process dies, or TIMEOUT.
wait_until() {
  local pid=$2; shift 2
  local deadline=$((SECONDS + TIMEOUT))
  while [ $SECONDS -lt $deadline ]; do
    if ! alive "$pid"; then
      return 2
    fi
    if "$@" >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.2
  done
  return 1
}

etcd_healthy() {
  curl -sf --max-time 2 "http://127.0.0.1:$ETCD_PORT/health" | grep -q '"health":"true"'
}

apiserver_ready() {
  [ -f "$D/pki/apiserver.crt" ] &&
    [ "$(curl -s --max-time 3 --cacert "$D/pki/apiserver.crt" \
      -H "Authorization: Bearer $TOKEN" "https://127.0.0.1:$API_PORT/readyz")" = ok ]
}

port_in_use_in_log() {
  tail -n 50 "$D/$1.log" 2>/dev/null | grep -qi 'address already in use'
}

# ---- etcd ------------------------------------------------------------------------------

start_etcd() {
  rm -rf "$D/etcd-data"
  local extra=()
  # shellcheck disable=SC2206
  [ -n "${GANTRY_ETCD_EXTRA_ARGS:-}" ] && extra=(${GANTRY_ETCD_EXTRA_ARGS})
  launch etcd \
    --name=gantry-test \
    --data-dir="$D/etcd-data" \
    --listen-client-urls="http://127.0.0.1:$ETCD_PORT" \
    --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster="gantry-test=http://127.0.0.1:$ETCD_PEER_PORT" \
    --unsafe-no-fsync \
    --quota-backend-bytes=8589934592 \
    --log-level=warn \
    "${extra[@]}"
  ETCD_PID=$PID
  wait_until etcd "$ETCD_PID" etcd_healthy
}

# ---- kube-apiserver --------------------------------------------------------------------

# Kubernetes' own gang API (scheduling.k8s.io/v1beta1 Workload and PodGroup, Kubernetes
# 1.37, off by default): served by the API server, read by kube-scheduler's GangScheduling
# and TopologyAware plugins, and written by the Job controller for Jobs with spec.scheduling.
# CompositePodGroup (alpha, scheduling.k8s.io/v1alpha3) groups PodGroups into a tree.
# DRAWorkloadResourceClaims (beta, off): a PodGroup's spec.resourceClaims, claims reserved
# for the whole group.
WORKLOAD_GATES=GenericWorkload=true,TopologyAwareWorkloadScheduling=true,WorkloadWithJob=true,CompositePodGroup=true,DRAWorkloadResourceClaims=true

write_apiserver_args() {
  local extra=()
  # shellcheck disable=SC2206
  [ -n "${GANTRY_APISERVER_EXTRA_ARGS:-}" ] && extra=(${GANTRY_APISERVER_EXTRA_ARGS})
  printf '%s\n' \
    "--etcd-servers=http://127.0.0.1:$ETCD_PORT" \
    "--bind-address=127.0.0.1" \
    "--advertise-address=127.0.0.1" \
    "--endpoint-reconciler-type=none" \
    "--secure-port=$API_PORT" \
    "--cert-dir=$D/pki" \
    "--service-account-issuer=https://kubernetes.default.svc.cluster.local" \
    "--service-account-key-file=$D/sa.key" \
    "--service-account-signing-key-file=$D/sa.key" \
    "--service-cluster-ip-range=10.0.0.0/24" \
    "--token-auth-file=$D/tokens.csv" \
    "--authorization-mode=RBAC" \
    "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition" \
    "--shutdown-send-retry-after=true" \
    "--runtime-config=scheduling.k8s.io/v1beta1=true,scheduling.k8s.io/v1alpha3=true" \
    "--feature-gates=$WORKLOAD_GATES" \
    "${extra[@]}" >"$D/kube-apiserver.args"
}

start_apiserver_proc() {
  local args=()
  mapfile -t args <"$D/kube-apiserver.args"
  launch kube-apiserver "${args[@]}"
  API_PID=$PID
  wait_until kube-apiserver "$API_PID" apiserver_ready
}

write_files() {
  local ca="$D/pki/apiserver.crt" url="https://127.0.0.1:$API_PORT"
  cat >"$D/kubeconfig.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: gantry-test
  cluster:
    server: $url
    certificate-authority: $ca
users:
- name: admin
  user:
    token: $TOKEN
contexts:
- name: gantry-test
  context:
    cluster: gantry-test
    user: admin
    namespace: default
current-context: gantry-test
EOF
  mv -f "$D/kubeconfig.tmp" "$D/kubeconfig"
  cat >"$D/env.tmp" <<EOF
export GANTRY_TESTENV_DIR='$D'
export GANTRY_K8S_BIN='$BIN'
export KUBECONFIG='$D/kubeconfig'
export GANTRY_APISERVER_URL='$url'
export GANTRY_APISERVER_PORT='$API_PORT'
export GANTRY_TOKEN='$TOKEN'
export GANTRY_CA_FILE='$ca'
export GANTRY_ETCD_URL='http://127.0.0.1:$ETCD_PORT'
export GANTRY_ETCD_PORT='$ETCD_PORT'
export GANTRY_ETCD_PEER_PORT='$ETCD_PEER_PORT'
export GANTRY_ETCD_PID='${ETCD_PID:-}'
export GANTRY_APISERVER_PID='${API_PID:-}'
EOF
  # Keep the pids of a kube-scheduler, kwok or kube-controller-manager started later.
  grep -E '^export GANTRY_(SCHEDULER|KWOK|CONTROLLER_MANAGER)_PID=' "$D/env" >>"$D/env.tmp" \
    2>/dev/null || true
  mv -f "$D/env.tmp" "$D/env"
}

load_env() {
  [ -f "$D/env" ] || die "$D/env not found: run '$0 start $D' first"
  # shellcheck disable=SC1091
  . "$D/env"
  API_PORT=$GANTRY_APISERVER_PORT
  ETCD_PORT=$GANTRY_ETCD_PORT
  ETCD_PEER_PORT=$GANTRY_ETCD_PEER_PORT
  TOKEN=$GANTRY_TOKEN
  ETCD_PID=$GANTRY_ETCD_PID
  API_PID=$GANTRY_APISERVER_PID
  BIN=$GANTRY_K8S_BIN
}

# ---- commands --------------------------------------------------------------------------

cmd_start() {
  local p
  for p in etcd kube-apiserver; do
    if [ -f "$D/$p.pid" ] && pid_is "$(cat "$D/$p.pid")" "$p"; then
      die "$p is already running in $D (pid $(cat "$D/$p.pid")); run '$0 stop $D' first"
    fi
  done
  BIN=$(bin_dir)
  if [ ! -x "$BIN/etcd" ] || [ ! -x "$BIN/kube-apiserver" ]; then die "binaries missing in $BIN"; fi
  command -v openssl >/dev/null || die "openssl is required"
  command -v curl >/dev/null || die "curl is required"

  rm -rf "$D/pki"
  rm -f "$D"/*.log "$D/env" "$D/kubeconfig"
  mkdir -p "$D/pki"
  openssl genrsa -out "$D/sa.key" 2048 2>/dev/null
  TOKEN=$(openssl rand -hex 24)
  (umask 077 && echo "$TOKEN,admin,admin,\"system:masters\"" >"$D/tokens.csv")

  local attempt rc
  for attempt in 1 2 3; do
    read -r ETCD_PORT ETCD_PEER_PORT API_PORT <<<"$(free_ports 3)"
    rc=0
    start_etcd || rc=$?
    if [ $rc -eq 0 ]; then break; fi
    stop_proc etcd
    if [ $rc -eq 2 ] && port_in_use_in_log etcd && [ $attempt -lt 3 ]; then
      log "etcd port taken, retrying with other ports"
      continue
    fi
    log_tail etcd
    die "etcd did not become healthy on 127.0.0.1:$ETCD_PORT (rc=$rc; log: $D/etcd.log)"
  done

  for attempt in 1 2 3; do
    write_apiserver_args
    rc=0
    start_apiserver_proc || rc=$?
    if [ $rc -eq 0 ]; then break; fi
    stop_proc kube-apiserver
    if [ $rc -eq 2 ] && port_in_use_in_log kube-apiserver && [ $attempt -lt 3 ]; then
      log "apiserver port taken, retrying with another port"
      read -r API_PORT <<<"$(free_ports 1)"
      continue
    fi
    log_tail etcd kube-apiserver
    stop_proc etcd
    if [ $rc -eq 1 ]; then
      die "kube-apiserver not ready after ${TIMEOUT}s on https://127.0.0.1:$API_PORT (log: $D/kube-apiserver.log)"
    fi
    die "kube-apiserver exited during startup (log: $D/kube-apiserver.log)"
  done

  write_files
  log "ready: kube-apiserver https://127.0.0.1:$API_PORT (etcd 127.0.0.1:$ETCD_PORT); . $D/env"
}

cmd_stop_apiserver() {
  load_env
  stop_proc kube-apiserver
  API_PID=""
  write_files
}

cmd_start_apiserver() {
  load_env
  if [ -f "$D/kube-apiserver.pid" ] && pid_is "$(cat "$D/kube-apiserver.pid")" kube-apiserver; then
    die "kube-apiserver is already running in $D"
  fi
  pid_is "$ETCD_PID" etcd || die "etcd is not running in $D"
  local rc deadline=$((SECONDS + 30))
  while :; do
    rc=0
    start_apiserver_proc || rc=$?
    [ $rc -eq 0 ] && break
    stop_proc kube-apiserver
    # The old listener may linger for a moment; retry the same port for a while.
    if [ $rc -eq 2 ] && port_in_use_in_log kube-apiserver && [ $SECONDS -lt $deadline ]; then
      sleep 0.5
      continue
    fi
    log_tail kube-apiserver
    die "kube-apiserver did not come back on https://127.0.0.1:$API_PORT (rc=$rc)"
  done
  write_files
  log "kube-apiserver restarted on https://127.0.0.1:$API_PORT (pid $API_PID)"
}

cmd_restart_apiserver() {
  cmd_stop_apiserver
  cmd_start_apiserver
}

cmd_start_scheduler() {
  load_env
  [ -x "$BIN/kube-scheduler" ] || die "kube-scheduler missing in $BIN"
  if [ -f "$D/kube-scheduler.pid" ] && pid_is "$(cat "$D/kube-scheduler.pid")" kube-scheduler; then
    die "kube-scheduler is already running in $D"
  fi
  local port
  read -r port <<<"$(free_ports 1)"
  launch kube-scheduler \
    --kubeconfig="$D/kubeconfig" \
    --authentication-kubeconfig="$D/kubeconfig" \
    --authorization-kubeconfig="$D/kubeconfig" \
    --leader-elect=false \
    --bind-address=127.0.0.1 --secure-port="$port" \
    --cert-dir="$D/scheduler-pki" \
    --feature-gates="$WORKLOAD_GATES" \
    "$@"
  local pid=$PID
  echo "export GANTRY_SCHEDULER_PID='$pid'" >>"$D/env"
  local rc=0
  wait_until kube-scheduler "$pid" \
    curl -skf --max-time 2 "https://127.0.0.1:$port/healthz" || rc=$?
  if [ $rc -ne 0 ]; then
    log_tail kube-scheduler
    stop_proc kube-scheduler
    die "kube-scheduler did not become healthy (rc=$rc)"
  fi
  log "kube-scheduler running (pid $pid, healthz https://127.0.0.1:$port/healthz)"
}

cmd_start_kwok() {
  load_env
  [ -x "$BIN/kwok" ] || die "kwok missing in $BIN (build with GANTRY_K8S_KWOK=1)"
  if [ -f "$D/kwok.pid" ] && pid_is "$(cat "$D/kwok.pid")" kwok; then
    die "kwok is already running in $D"
  fi
  local port
  read -r port <<<"$(free_ports 1)"
  local stages="$BIN/../share/kwok-stages.yaml" args=("$@")
  [ -f "$stages" ] || die "$stages missing (rerun build-binaries.sh)"
  [ ${#args[@]} -gt 0 ] || args=(--manage-all-nodes=true)
  launch kwok \
    --kubeconfig="$D/kubeconfig" \
    --config="$stages" \
    --server-address="127.0.0.1:$port" \
    "${args[@]}"
  local pid=$PID
  echo "export GANTRY_KWOK_PID='$pid'" >>"$D/env"
  local rc=0
  wait_until kwok "$pid" curl -sf --max-time 2 "http://127.0.0.1:$port/healthz" || rc=$?
  if [ $rc -ne 0 ]; then
    log_tail kwok
    stop_proc kwok
    die "kwok did not become healthy (rc=$rc)"
  fi
  log "kwok running (pid $pid)"
}

# The PV controller alone (kube-controller-manager's persistentvolume-binder): it binds
# claims to volumes and finishes the bindings a scheduler starts, as in a real cluster.
# ARGS with --controllers=A,B,... run those instead (the operator tests: Job, Deployment,
# ReplicaSet, StatefulSet, garbage collector, disruption). The controllers use the
# kubeconfig's credentials (--use-service-account-credentials=false), so no token signer.
cmd_start_controller_manager() {
  load_env
  [ -x "$BIN/kube-controller-manager" ] || die "kube-controller-manager missing in $BIN"
  if [ -f "$D/kube-controller-manager.pid" ] &&
    pid_is "$(cat "$D/kube-controller-manager.pid")" kube-controller-manager; then
    die "kube-controller-manager is already running in $D"
  fi
  local port arg controllers=(--controllers=persistentvolume-binder)
  for arg in "$@"; do
    case $arg in --controllers=*) controllers=() ;; esac
  done
  read -r port <<<"$(free_ports 1)"
  launch kube-controller-manager \
    --kubeconfig="$D/kubeconfig" \
    --authentication-kubeconfig="$D/kubeconfig" \
    --authorization-kubeconfig="$D/kubeconfig" \
    --leader-elect=false \
    --use-service-account-credentials=false \
    "${controllers[@]}" \
    --bind-address=127.0.0.1 --secure-port="$port" \
    --cert-dir="$D/controller-manager-pki" \
    --feature-gates="$WORKLOAD_GATES" \
    "$@"
  local pid=$PID
  echo "export GANTRY_CONTROLLER_MANAGER_PID='$pid'" >>"$D/env"
  local rc=0
  wait_until kube-controller-manager "$pid" \
    curl -skf --max-time 2 "https://127.0.0.1:$port/healthz" || rc=$?
  if [ $rc -ne 0 ]; then
    log_tail kube-controller-manager
    stop_proc kube-controller-manager
    die "kube-controller-manager did not become healthy (rc=$rc)"
  fi
  log "kube-controller-manager running (pid $pid)"
}

# launch_operator NAME ARGS...: an operator from build-operators.sh (ray-operator or kueue)
# with ARGS, against this server; sets PID.
launch_operator() {
  local name=$1; shift
  local ops
  ops=$(operators_dir)
  [ -x "$ops/bin/$name" ] || die "$name missing in $ops/bin (run build-operators.sh)"
  if [ -f "$D/$name.pid" ] && pid_is "$(cat "$D/$name.pid")" "$name"; then
    die "$name is already running in $D"
  fi
  local saved_bin=$BIN
  BIN="$ops/bin"
  KUBECONFIG="$D/kubeconfig" launch "$name" "$@"
  BIN=$saved_bin
}

# wait_operator_ready NAME PID PROBE_PORT: until its health probe answers /readyz.
wait_operator_ready() {
  local name=$1 pid=$2 port=$3 rc=0
  wait_until "$name" "$pid" curl -sf --max-time 2 "http://127.0.0.1:$port/readyz" || rc=$?
  if [ $rc -ne 0 ]; then
    log_tail "$name"
    stop_proc "$name"
    die "$name did not become ready (rc=$rc)"
  fi
  log "$name running (pid $pid)"
}

# KubeRay's operator with ARGS (e.g. --batch-scheduler=volcano); metrics off.
cmd_start_ray_operator() {
  load_env
  local port
  read -r port <<<"$(free_ports 1)"
  launch_operator ray-operator --kubeconfig="$D/kubeconfig" --metrics-addr=0 \
    --health-probe-bind-address="127.0.0.1:$port" --enable-leader-election=false \
    --log-stdout-encoder=console "$@"
  wait_operator_ready ray-operator "$PID" "$port"
}

# KEY of the Secret kueue-system/kueue-webhook-server-cert, decoded; fails while absent.
kueue_secret_key() {
  curl -sf --max-time 3 --cacert "$GANTRY_CA_FILE" -H "Authorization: Bearer $TOKEN" \
    "https://127.0.0.1:$API_PORT/api/v1/namespaces/kueue-system/secrets/kueue-webhook-server-cert" |
    grep -o "\"$1\": *\"[A-Za-z0-9+/=]*\"" | sed 's/.*: *"\(.*\)"/\1/' | base64 -d
}

# Kueue's controller manager with the configuration file CONFIG (a Kueue Configuration
# without health, webhook and metrics sections: they are added here, on free ports of
# 127.0.0.1, metrics off). Its internal certificate management (the Configuration's
# internalCertManagement) writes the webhook server's certificate into the Secret
# kueue-system/kueue-webhook-server-cert, which must exist, and waits for the certificate
# files in webhook.certDir, where a pod would mount the Secret: here they are copied there.
cmd_start_kueue() {
  load_env
  [ $# -ge 1 ] || die "usage: $0 start-kueue DIR CONFIG [ARGS...]"
  local config=$1 probe webhook certs="$D/kueue-certs"; shift
  [ -f "$config" ] || die "$config not found"
  read -r probe webhook <<<"$(free_ports 2)"
  rm -rf "$certs"
  mkdir -p "$certs"
  {
    cat "$config"
    printf '\nhealth:\n  healthProbeBindAddress: "127.0.0.1:%s"\n' "$probe"
    printf 'metrics:\n  bindAddress: "0"\n'
    printf 'webhook:\n  host: 127.0.0.1\n  port: %s\n  certDir: %s\n' "$webhook" "$certs"
  } >"$D/kueue-config.yaml"
  launch_operator kueue --kubeconfig="$D/kubeconfig" --config="$D/kueue-config.yaml" "$@"
  local pid=$PID deadline=$((SECONDS + TIMEOUT)) crt key
  while :; do
    alive "$pid" || { log_tail kueue; die "kueue exited during startup"; }
    crt=$(kueue_secret_key tls.crt 2>/dev/null || true)
    key=$(kueue_secret_key tls.key 2>/dev/null || true)
    if [ -n "$crt" ] && [ -n "$key" ]; then
      (umask 077 && printf '%s\n' "$key" >"$certs/tls.key.tmp")
      printf '%s\n' "$crt" >"$certs/tls.crt.tmp"
      mv -f "$certs/tls.key.tmp" "$certs/tls.key"
      mv -f "$certs/tls.crt.tmp" "$certs/tls.crt"
      break
    fi
    if [ $SECONDS -ge $deadline ]; then
      log_tail kueue
      stop_proc kueue
      die "kueue wrote no certificate into its Secret"
    fi
    sleep 0.2
  done
  wait_operator_ready kueue "$pid" "$probe"
}

# Karpenter's controllers with its kwok cloud provider (a NodeClaim becomes a kwok Node of
# the instance type chosen from TYPES, Karpenter's InstanceTypeOptions JSON), against this
# server: leader election off, metrics and health probe on free ports, pending pods batched
# for at most 3 s (Karpenter's default is 10 s) so that tests wait less.
cmd_start_karpenter() {
  load_env
  [ $# -ge 1 ] || die "usage: $0 start-karpenter DIR TYPES [ARGS...]"
  local types=$1 metrics probe; shift
  [ -f "$types" ] || die "$types not found"
  read -r metrics probe <<<"$(free_ports 2)"
  INSTANCE_TYPES_FILE_PATH="$types" launch_operator karpenter-kwok \
    --disable-leader-election=true --metrics-port="$metrics" --health-probe-port="$probe" \
    --batch-idle-duration=1s --batch-max-duration=3s "$@"
  wait_operator_ready karpenter-kwok "$PID" "$probe"
}

cmd_stop() {
  [ -d "$D" ] || return 0
  local p
  for p in karpenter-kwok kueue ray-operator kwok kube-controller-manager kube-scheduler kube-apiserver etcd; do
    stop_proc "$p"
  done
  if [ -f "$D/env" ]; then
    sed -i -e "s/^export GANTRY_ETCD_PID=.*/export GANTRY_ETCD_PID=''/" \
      -e "s/^export GANTRY_APISERVER_PID=.*/export GANTRY_APISERVER_PID=''/" \
      -e '/^export GANTRY_SCHEDULER_PID=/d' -e '/^export GANTRY_KWOK_PID=/d' \
      -e '/^export GANTRY_CONTROLLER_MANAGER_PID=/d' "$D/env"
  fi
}

cmd_status() {
  local p pid rc=0
  for p in etcd kube-apiserver kube-scheduler kube-controller-manager kwok ray-operator kueue karpenter-kwok; do
    pid=$(cat "$D/$p.pid" 2>/dev/null || true)
    if pid_is "$pid" "$p"; then
      echo "$p running (pid $pid)"
    else
      echo "$p stopped"
      case $p in etcd | kube-apiserver) rc=1 ;; esac
    fi
  done
  return $rc
}

[ $# -ge 2 ] || usage
CMD=$1
[ "$CMD" = start ] && mkdir -p "$2"
if [ -d "$2" ]; then D=$(cd "$2" && pwd); else D=$2; fi
shift 2

case "$CMD" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  restart-apiserver) cmd_restart_apiserver ;;
  stop-apiserver) cmd_stop_apiserver ;;
  start-apiserver) cmd_start_apiserver ;;
  start-scheduler) cmd_start_scheduler "$@" ;;
  start-kwok) cmd_start_kwok "$@" ;;
  start-karpenter) cmd_start_karpenter "$@" ;;
  start-controller-manager) cmd_start_controller_manager "$@" ;;
  start-ray-operator) cmd_start_ray_operator "$@" ;;
  start-kueue) cmd_start_kueue "$@" ;;
  status) cmd_status ;;
  *) usage ;;
esac
