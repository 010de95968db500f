#!/usr/bin/env bash
# Start a Dask scheduler for `campaign run SPEC --scheduler ADDRESS`.
#
# Usage: cluster/start-scheduler.sh [HOST [PORT]]
#   HOST  the one address to listen on (default 127.0.0.1: this machine only). For workers on
#         other machines give this machine's address on the cluster's private network, never
#         0.0.0.0 (every interface), and use TLS unless everyone who can reach it is trusted.
#   PORT  default 8786
# Plain tcp:// is neither encrypted nor authenticated: whoever reaches HOST:PORT can run code
# on every worker. With CERTS=DIR (made by cluster/make-certs.sh) the scheduler serves TLS
# only: the address is tls://HOST:PORT and only holders of a certificate signed by DIR/ca.pem
# can connect.
# The dashboard (plain HTTP, read-only) listens on HOST:8787; DASHBOARD=ADDR:PORT moves it
# (127.0.0.1:8787 keeps it on this machine: reach it with ssh -L 8787:localhost:8787), and
# DASHBOARD=none turns it off (the scheduler's remaining HTTP endpoints then listen on
# 127.0.0.1 only).
set -euo pipefail
host=${1:-127.0.0.1}
port=${2:-8786}
case "$host" in
    "" | *:*)
        echo "start-scheduler.sh: HOST must be an IPv4 address or a host name, got '$host'" >&2
        exit 2
        ;;
esac
args=(--host "$host" --port "$port")
if [[ -n "${CERTS:-}" ]]; then
    args+=(--protocol tls --tls-ca-file "$CERTS/ca.pem" --tls-cert "$CERTS/cluster.pem"
           --tls-key "$CERTS/cluster-key.pem")
    scheme=tls
else
    scheme=tcp
fi
if [[ "${DASHBOARD:-}" == none ]]; then
    args+=(--no-dashboard --dashboard-address 127.0.0.1:0)
else
    args+=(--dashboard-address "${DASHBOARD:-$host:8787}")
fi
if [[ "$host" == 0.0.0.0 ]]; then
    echo "start-scheduler.sh: warning: listening on every interface of this machine" >&2
fi
if [[ $scheme == tcp && "$host" != 127.* && "$host" != localhost ]]; then
    echo "start-scheduler.sh: warning: plain TCP on $host: whoever reaches port $port can run" \
        "code on the workers; use CERTS=DIR (TLS, see cluster/README.md) unless the network" \
        "is trusted" >&2
fi
echo "Dask scheduler at $scheme://$host:$port (campaign run SPEC --scheduler $scheme://$host:$port)" >&2
exec dask scheduler "${args[@]}"
