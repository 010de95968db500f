#!/usr/bin/env bash
# Install the Debian packages the tests use, when missing: chromium (the report's page is
# opened in a real browser) and a single-node SLURM with its Torque-compatible wrappers
# (slurmctld, slurmd, munge, slurm-wlm-torque: the batch-system tests start one with
# cluster/local-slurm.sh). Needs root, or nothing to install.
set -euo pipefail
need=()
command -v chromium >/dev/null || need+=(chromium)
command -v slurmctld >/dev/null || need+=(slurmctld)
command -v slurmd >/dev/null || need+=(slurmd)
command -v sbatch >/dev/null || need+=(slurm-client)
command -v munged >/dev/null || need+=(munge)
command -v qsub >/dev/null || need+=(slurm-wlm-torque)
if (( ${#need[@]} == 0 )); then
    exit 0
fi
if [[ $EUID -ne 0 ]]; then
    echo "install-test-packages.sh: the tests need ${need[*]}; run this as root to install them" >&2
    exit 2
fi
echo "installing ${need[*]} (Debian packages the tests use)" >&2
apt-get update -q >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null
