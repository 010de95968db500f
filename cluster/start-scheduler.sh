#!/usr/bin/env bash
# Start a Dask scheduler for `campaign run SPEC --scheduler ADDRESS`.
#
# Usage: cluster/start-scheduler.sh [HOST [PORT]]
#   HOST  address to listen on (default 127.0.0.1: this machine only; use the machine's
#         cluster-network address to accept workers from other machines)
#   PORT  default 8786
# With CERTS=DIR (made by cluster/make-certs.sh) it serves TLS only: then the address is
# tls://HOST:PORT and only holders of a certificate signed by DIR/ca.pem can connect.
# The dashboard listens on HOST:8787 (DASHBOARD=HOST:PORT to change, DASHBOARD=none for none).
set -euo pipefail
host=${1:-127.0.0.1}
port=${2:-8786}
args=(--host "$host" --port "$port")
if [[ -n "${CERTS:-}" ]]; then
    args+=(--protocol tls --tls-ca-file "$CERTS/ca.pem" --tls-cert "$CERTS/cluster.pem"
           --tls-key "$CERTS/cluster-key.pem")
    scheme=tls
else
    scheme=tcp
fi
if [[ "${DASHBOARD:-}" == none ]]; then
    args+=(--no-dashboard)
else
    args+=(--dashboard-address "${DASHBOARD:-$host:8787}")
fi
echo "Dask scheduler at $scheme://$host:$port (campaign run SPEC --scheduler $scheme://$host:$port)" >&2
exec dask scheduler "${args[@]}"
