#!/usr/bin/env bash
# Start a single-node SLURM on this machine (as root, from Debian's slurmctld, slurmd and munge),
# sized to its cores and memory, and wait until its node takes jobs. For trying --cluster and
# array jobs on one machine, and for the tests of tests/slurm. Idempotent: a SLURM already
# answering is left as it is. `local-slurm.sh stop` stops it.
set -euo pipefail
PATH="$PATH:/usr/sbin:/sbin"  # the daemons' home, not on a minimal PATH (env -i, cron)
CONF=/etc/slurm/slurm.conf
STATE=/var/spool/slurmctld

if [[ "${1:-start}" == stop ]]; then
    pkill -x slurmd || true
    pkill -x slurmctld || true
    exit 0
fi
if [[ $EUID -ne 0 ]]; then
    echo "local-slurm.sh: run as root (it writes $CONF and starts daemons)" >&2
    exit 2
fi
if sinfo -h -o %T 2>/dev/null | grep -q -E '^(idle|mixed|allocated)'; then
    exit 0
fi
missing=()
for cmd in slurmctld slurmd munged sbatch; do command -v "$cmd" >/dev/null || missing+=("$cmd"); done
if (( ${#missing[@]} )); then
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurmctld slurmd slurm-client munge \
        slurm-wlm-torque >/dev/null
fi
host=$(hostname -s)
cpus=$(nproc)
memory=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024 ))
mkdir -p /etc/slurm "$STATE" /var/spool/slurmd /var/log/slurm /run/munge
cat > "$CONF" <<CONF
ClusterName=local
SlurmctldHost=$host(127.0.0.1)
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=$STATE
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmUser=root
ReturnToService=2
MinJobAge=30
KillWait=5
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=30
MessageTimeout=20
$(slurmd -C | head -1 | sed -E "s/RealMemory=[0-9]+/RealMemory=$memory/; s/^NodeName=[^ ]+/NodeName=$host NodeAddr=127.0.0.1/") State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
rm -f /etc/slurm/cgroup.conf  # no cgroups: proctrack/linuxproc and task/none need none
if [[ ! -s /etc/munge/munge.key ]]; then
    mkdir -p /etc/munge
    dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
fi
chown -R munge:munge /etc/munge /run/munge /var/lib/munge /var/log/munge 2>/dev/null || true
chmod 400 /etc/munge/munge.key
# Daemons left running after their package was removed (or upgraded) run a deleted binary and
# have lost their socket: they are stopped, and started again below.
for daemon in munged slurmctld slurmd; do
    for pid in $(pgrep -x "$daemon"); do
        [[ $(readlink "/proc/$pid/exe") == *" (deleted)" ]] && kill "$pid"
    done
done
sleep 1
if ! munge -n >/dev/null 2>&1; then  # the process alone does not say it answers
    pkill -x munged 2>/dev/null && sleep 1
    su -s /bin/sh munge -c /usr/sbin/munged
fi
pgrep -x slurmctld >/dev/null || slurmctld
pgrep -x slurmd >/dev/null || slurmd
for _ in $(seq 120); do
    if sinfo -h -o %T 2>/dev/null | grep -q -E '^(idle|mixed|allocated)'; then
        exit 0
    fi
    sleep 1
done
echo "local-slurm.sh: SLURM did not come up in 120 s; see /var/log/slurm/" >&2
exit 1
