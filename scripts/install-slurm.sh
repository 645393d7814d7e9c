#!/usr/bin/env bash
# A one-node SLURM cluster on this host, for the SLURM tests (`make slurm`, which `make test` runs).
#
# Idempotent. Run as root (CI: `make slurm`). It:
#   1. apt-get installs Debian's slurm-wlm (22.05: slurmctld, slurmd, the client tools) and munge
#      if any is missing;
#   2. makes sure a munge key exists (/etc/munge/munge.key, mode 0400, owner munge) and that munged
#      runs as the munge user and answers `munge -n | unmunge`;
#   3. writes /etc/slurm/slurm.conf for one node named after `hostname -s` with CPUs=2 (SLURM_CPUS)
#      and RealMemory a little under the machine's memory, SlurmUser=root, proctrack/linuxproc,
#      task/none, select/cons_tres (CR_CPU: memory is not a consumable, so array tasks pack by CPU),
#      and one default partition `debug` (SLURM_PARTITION);
#   4. starts slurmctld and slurmd (no systemd here; restarts them when slurm.conf changed) and waits
#      until `sinfo` shows the node idle (resuming it when a restart left it down or drained).
#
# Environment:
#   SLURM_CPUS       CPUs declared for the node (default 2)
#   SLURM_PARTITION  partition name (default debug)
#   SLURM_WAIT_S     seconds to wait for the node to become idle (default 60)
# shellcheck source=scripts/lib/errexit.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/errexit.sh"   # set -Eeuo pipefail; a failure names its line and command

SLURM_CPUS=${SLURM_CPUS:-2}
SLURM_PARTITION=${SLURM_PARTITION:-debug}
SLURM_WAIT_S=${SLURM_WAIT_S:-60}
CONF_DIR=/etc/slurm
CONF=$CONF_DIR/slurm.conf
MUNGE_KEY=/etc/munge/munge.key
LOG_DIR=/var/log/slurm
STATE_DIR=/var/lib/slurm/slurmctld
SPOOL_DIR=/var/lib/slurm/slurmd
CTLD_PID=/run/slurmctld.pid
SLURMD_PID=/run/slurmd.pid

LOG_NAME=install-slurm
# shellcheck source=scripts/lib/install-common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/install-common.sh"

require_root "installs packages, writes $CONF, starts munged/slurmctld/slurmd"
case "$SLURM_CPUS" in ''|*[!0-9]*) die "SLURM_CPUS must be a positive integer, got '$SLURM_CPUS'";; esac

# --- 1. packages -----------------------------------------------------------------------------
# --no-daemon-start: this script starts the daemons itself, with the configuration written below.
PACKAGES=(slurm-wlm munge)
install_missing --no-daemon-start "${PACKAGES[@]}"
for b in slurmctld slurmd sinfo sbatch squeue scontrol munged munge unmunge; do
    command -v "$b" >/dev/null || die "$b not on PATH after installing ${PACKAGES[*]}"
done
id munge >/dev/null 2>&1 || die "user 'munge' missing after installing munge"

# --- 2. munge --------------------------------------------------------------------------------
if [ ! -s "$MUNGE_KEY" ]; then
    log "creating munge key $MUNGE_KEY"
    mkdir -p /etc/munge
    if command -v mungekey >/dev/null; then
        mungekey --create --keyfile="$MUNGE_KEY" --force
    else
        dd if=/dev/urandom of="$MUNGE_KEY" bs=1 count=1024 status=none
    fi
fi
chown munge:munge /etc/munge "$MUNGE_KEY"
chmod 700 /etc/munge
chmod 400 "$MUNGE_KEY"
install -d -o munge -g munge -m 755 /run/munge
install -d -o munge -g munge -m 700 /var/lib/munge /var/log/munge

munge_ok() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }
if ! munge_ok; then
    pid=$(pgrep -u munge -x munged || true)
    [ -z "$pid" ] || { log "munged (pid $pid) does not answer: restarting it"; kill "$pid"; sleep 1; }
    log "starting munged as user munge"
    runuser -u munge -- /usr/sbin/munged || die "munged failed to start (log: /var/log/munge/munged.log)"
    for _ in $(seq 1 20); do munge_ok && break; sleep 0.5; done
    munge_ok || die "munged started but 'munge -n | unmunge' fails (log: /var/log/munge/munged.log)"
fi
log "munge ok (munged pid $(pgrep -u munge -x munged | sed -n 1p))"

# --- 3. slurm.conf ---------------------------------------------------------------------------
NODE=$(hostname -s)
[ -n "$NODE" ] || die "hostname -s is empty"
# The node and the controller are addressed as 127.0.0.1, so the cluster does not depend on name resolution.
mem_mb=$(awk '/^MemTotal:/ {print int($2/1024)}' /proc/meminfo)
# Declare a little less than the machine has: slurmd drains a node whose RealMemory exceeds what it finds.
REAL_MEMORY=$(( mem_mb * 9 / 10 ))
[ "$REAL_MEMORY" -gt 0 ] || die "could not read MemTotal from /proc/meminfo"

desired=$(cat <<EOF
# Written by scripts/install-slurm.sh: a one-node test cluster on $NODE. Edit that script, not this file.
ClusterName=kit
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2
ReturnToService=2
StateSaveLocation=$STATE_DIR
SlurmdSpoolDir=$SPOOL_DIR
SlurmctldPidFile=$CTLD_PID
SlurmdPidFile=$SLURMD_PID
SlurmctldLogFile=$LOG_DIR/slurmctld.log
SlurmdLogFile=$LOG_DIR/slurmd.log
SlurmctldTimeout=30
SlurmdTimeout=60
InactiveLimit=0
MinJobAge=600
KillWait=10
Waittime=0
MaxArraySize=10001
NodeName=$NODE NodeAddr=127.0.0.1 NodeHostname=$NODE CPUs=$SLURM_CPUS RealMemory=$REAL_MEMORY State=UNKNOWN
PartitionName=$SLURM_PARTITION Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
)
mkdir -p "$CONF_DIR" "$LOG_DIR" "$STATE_DIR" "$SPOOL_DIR"
changed=0
if [ ! -f "$CONF" ] || [ "$(cat "$CONF")" != "$desired" ]; then
    printf '%s\n' "$desired" > "$CONF.tmp" && mv "$CONF.tmp" "$CONF"
    chmod 644 "$CONF"
    changed=1
    log "wrote $CONF (node $NODE, CPUs=$SLURM_CPUS, RealMemory=$REAL_MEMORY MB, partition $SLURM_PARTITION)"
fi

# --- 4. slurmctld and slurmd -----------------------------------------------------------------
stop_daemon() {  # stop_daemon NAME PIDFILE
    local pid
    pid=$(daemon_pid "$1" "$2") || return 0
    log "stopping $1 (pid $pid)"
    kill "$pid"
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.5; done
    die "$1 (pid $pid) did not stop within 20 s"
}
if [ "$changed" -eq 1 ]; then
    stop_daemon slurmd "$SLURMD_PID"
    stop_daemon slurmctld "$CTLD_PID"
fi
if ! daemon_pid slurmctld "$CTLD_PID" >/dev/null; then
    log "starting slurmctld (log: $LOG_DIR/slurmctld.log)"
    slurmctld || { tail -n 20 "$LOG_DIR/slurmctld.log" >&2 || true; die "slurmctld failed to start"; }
fi
if ! daemon_pid slurmd "$SLURMD_PID" >/dev/null; then
    log "starting slurmd (log: $LOG_DIR/slurmd.log)"
    slurmd || { tail -n 20 "$LOG_DIR/slurmd.log" >&2 || true; die "slurmd failed to start"; }
fi

node_state() { sinfo -h -N -n "$NODE" -o '%T' 2>/dev/null | sed -n 1p; }
deadline=$((SECONDS + SLURM_WAIT_S))
resumed=0
while :; do
    state=$(node_state)
    case "$state" in
        idle|mixed|allocated|completing) break ;;
        down*|drain*|drained*)
            if [ "$resumed" -eq 0 ]; then
                log "node $NODE is '$state' ($(sinfo -h -R -n "$NODE" -o '%E' 2>/dev/null)); resuming it"
                scontrol update NodeName="$NODE" State=RESUME || true
                resumed=1
            fi ;;
    esac
    if [ "$SECONDS" -ge "$deadline" ]; then
        tail -n 15 "$LOG_DIR/slurmctld.log" >&2 || true
        tail -n 15 "$LOG_DIR/slurmd.log" >&2 || true
        die "node $NODE not idle within ${SLURM_WAIT_S} s (sinfo state: '${state:-no answer}'; logs in $LOG_DIR)"
    fi
    sleep 1
done
log "ready: $(sinfo --version), node $NODE $state in partition $SLURM_PARTITION"
