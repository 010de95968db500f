#!/usr/bin/env bash
# Make a private certificate authority and certificates for a TLS-secured Dask cluster.
#
# Usage: cluster/make-certs.sh DIR [NAME ...]
#
# Writes into DIR (created if needed):
#   ca.pem, ca-key.pem        the certificate authority (keep ca-key.pem off the cluster)
#   NAME.pem, NAME-key.pem    a certificate and key signed by that authority, for each NAME
#                             (default: one named "cluster", shared by scheduler, workers and
#                             clients)
#   security.yaml             for `campaign run --security DIR/security.yaml`, using the
#                             first NAME
# Dask requires both ends of every connection to show a certificate signed by ca.pem, so
# only holders of such a certificate and its key can talk to the scheduler and the workers.
# Needs openssl. Existing files are never overwritten.
set -euo pipefail

if [[ $# -lt 1 || "$1" == "-h" || "$1" == "--help" ]]; then
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
command -v openssl >/dev/null || { echo "make-certs.sh: openssl is not installed" >&2; exit 1; }

dir=$1
shift
names=("$@")
[[ ${#names[@]} -gt 0 ]] || names=(cluster)
days=${CERT_DAYS:-825}
mkdir -p "$dir"
umask 077

refuse_existing() {
    for file in "$@"; do
        if [[ -e "$file" ]]; then
            echo "make-certs.sh: $file exists; not overwriting it" >&2
            exit 1
        fi
    done
}

if [[ ! -e "$dir/ca.pem" ]]; then
    refuse_existing "$dir/ca-key.pem"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -keyout "$dir/ca-key.pem" -out "$dir/ca.pem" -days "$days" \
        -subj "/CN=campaign dask CA" \
        -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
    chmod 644 "$dir/ca.pem"
    echo "made certificate authority $dir/ca.pem"
fi

extensions=$(mktemp)
trap 'rm -f "$extensions" "$dir"/*.csr' EXIT
cat >"$extensions" <<EXT
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth,clientAuth
EXT

for name in "${names[@]}"; do
    refuse_existing "$dir/$name.pem" "$dir/$name-key.pem"
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -keyout "$dir/$name-key.pem" -out "$dir/$name.csr" -subj "/CN=$name" 2>/dev/null
    openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca-key.pem" \
        -set_serial "0x$(openssl rand -hex 16)" -days "$days" -extfile "$extensions" \
        -out "$dir/$name.pem" 2>/dev/null
    chmod 644 "$dir/$name.pem"
    echo "made certificate $dir/$name.pem (key $dir/$name-key.pem)"
done

if [[ ! -e "$dir/security.yaml" ]]; then
    cat >"$dir/security.yaml" <<YAML
# TLS settings for \`campaign run --security\`; paths are relative to this file.
ca: ca.pem
cert: ${names[0]}.pem
key: ${names[0]}-key.pem
YAML
    echo "made $dir/security.yaml"
fi
