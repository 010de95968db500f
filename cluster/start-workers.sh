#!/usr/bin/env bash
# Start Dask workers on this machine for a scheduler started with start-scheduler.sh.
#
# Usage: cluster/start-workers.sh ADDRESS [N]
#   ADDRESS  the scheduler, tcp://HOST:PORT (or tls://HOST:PORT with CERTS=DIR)
#   N        worker processes, one thread each (default: one per core)
# Run it on every machine that should work; each machine needs the same Python environment
# (campaign and the models it runs installed). Every worker, its nanny and its HTTP status
# page listen on one address only: the one of this machine's interfaces that reaches the
# scheduler (127.0.0.1 for a scheduler on 127.0.0.1), or HOST=ADDR. Plain tcp:// is neither
# encrypted nor authenticated: whoever reaches a worker's port can run code in it. With
# CERTS=DIR the workers use TLS with DIR/ca.pem, DIR/cluster.pem and DIR/cluster-key.pem and
# accept only holders of a certificate signed by DIR/ca.pem.
# Each worker runs under a nanny, which restarts it if it dies or is stopped by
# `campaign run --task-timeout`.
set -euo pipefail
if [[ $# -lt 1 ]]; then
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
address=$1
count=${2:-$(nproc)}

fail() {
    echo "start-workers.sh: $*" >&2
    exit 2
}

# The address of this machine's interface that reaches the scheduler: the source address of
# a (never sent) UDP datagram to it, as Dask's own get_ip finds it.
reaching_address() {
    python3 - "$1" <<'PY'
import socket
import sys
from urllib.parse import urlsplit

url = urlsplit(sys.argv[1])
try:
    family, kind, proto, _, target = socket.getaddrinfo(
        url.hostname, url.port or 8786, socket.AF_INET, socket.SOCK_DGRAM
    )[0]
    with socket.socket(family, kind, proto) as sock:
        sock.connect(target)
        print(sock.getsockname()[0])
except (OSError, ValueError) as error:
    print(getattr(error, "strerror", None) or error)
    sys.exit(1)
PY
}

case "$address" in
    tcp://?*) [[ -z "${CERTS:-}" ]] || fail "CERTS is set: the scheduler address must be tls://HOST:PORT" ;;
    tls://?*) [[ -n "${CERTS:-}" ]] || fail "a tls:// scheduler needs CERTS=DIR (see cluster/README.md)" ;;
    *) fail "ADDRESS must be tcp://HOST:PORT or tls://HOST:PORT, got '$address'" ;;
esac
if [[ -n "${HOST:-}" ]]; then
    host=$HOST
else
    host=$(reaching_address "$address") ||
        fail "cannot tell which address of this machine reaches $address ($host): give HOST=ADDR"
fi
case "$host" in
    *:*) fail "HOST must be an IPv4 address or a host name, got '$host'" ;;
    0.0.0.0) echo "start-workers.sh: warning: listening on every interface of this machine" >&2 ;;
esac
if [[ "$address" == tcp://* && "$host" != 127.* && "$host" != localhost ]]; then
    echo "start-workers.sh: warning: plain TCP on $host: whoever reaches these workers' ports" \
        "can run code in them; use CERTS=DIR (TLS, see cluster/README.md) unless the network" \
        "is trusted" >&2
fi
args=("$address" --nworkers "$count" --nthreads 1 --host "$host" --dashboard-address "$host:0")
if [[ -n "${CERTS:-}" ]]; then
    args+=(--tls-ca-file "$CERTS/ca.pem" --tls-cert "$CERTS/cluster.pem"
           --tls-key "$CERTS/cluster-key.pem")
fi
echo "Dask workers on $host for the scheduler $address" >&2
exec dask worker "${args[@]}"
