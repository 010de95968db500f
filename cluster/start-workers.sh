#!/usr/bin/env bash
# Start Dask workers on this machine for a scheduler started with start-scheduler.sh.
#
# Usage: cluster/start-workers.sh ADDRESS [N]
#   ADDRESS  the scheduler, tcp://HOST:PORT (or tls://HOST:PORT with CERTS=DIR)
#   N        worker processes, one thread each (default: one per core)
# Run it on every machine that should work; each machine needs the same Python environment
# (campaign and the models it runs installed). With CERTS=DIR the workers use TLS with
# DIR/ca.pem, DIR/cluster.pem and DIR/cluster-key.pem. HOST=ADDR sets the address the
# workers listen on (default: the one that reaches the scheduler).
# Each worker runs under a nanny, which restarts it if it dies or is stopped by
# `campaign run --task-timeout`.
set -euo pipefail
if [[ $# -lt 1 ]]; then
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
address=$1
count=${2:-$(nproc)}
args=("$address" --nworkers "$count" --nthreads 1)
[[ -n "${HOST:-}" ]] && args+=(--host "$HOST")
if [[ -n "${CERTS:-}" ]]; then
    args+=(--tls-ca-file "$CERTS/ca.pem" --tls-cert "$CERTS/cluster.pem"
           --tls-key "$CERTS/cluster-key.pem")
fi
exec dask worker "${args[@]}"
