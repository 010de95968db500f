#!/usr/bin/env bash
# Install the Debian packages the tests use, when missing: chromium (the report's page is
# opened in a real browser), a single-node SLURM with its Torque-compatible wrappers
# (slurmctld, slurmd, munge, slurm-wlm-torque: the batch-system tests start one with
# cluster/local-slurm.sh), poppler-utils (pdffonts: no Type 3 font in a figure's PDF),
# pdflatex with booktabs (texlive-latex-base, texlive-latex-recommended: a LaTeX table
# compiles), graphviz (dot draws the documentation site's diagrams), gcc (a tutorial's
# simulator is a C program), and libsimgrid-dev with g++ and make (specs/simgrid is a C++
# simulator built on SimGrid). Needs root, or nothing to install.
set -euo pipefail
PATH="$PATH:/usr/sbin:/sbin"  # where the daemons are, not on a minimal PATH (env -i, cron)
need=()
command -v chromium >/dev/null || need+=(chromium)
command -v slurmctld >/dev/null || need+=(slurmctld)
command -v slurmd >/dev/null || need+=(slurmd)
command -v sbatch >/dev/null || need+=(slurm-client)
command -v munged >/dev/null || need+=(munge)
command -v qsub >/dev/null || need+=(slurm-wlm-torque)
minimal=()  # installed without their recommended packages (TeX's would be hundreds of MB)
command -v pdffonts >/dev/null || minimal+=(poppler-utils)
command -v pdflatex >/dev/null || minimal+=(texlive-latex-base)
kpsewhich booktabs.sty >/dev/null 2>&1 || minimal+=(texlive-latex-recommended)
command -v dot >/dev/null || minimal+=(graphviz)
command -v gcc >/dev/null || minimal+=(gcc)
command -v g++ >/dev/null || minimal+=(g++)
command -v make >/dev/null || minimal+=(make)
[[ -e /usr/include/simgrid/s4u.hpp ]] || minimal+=(libsimgrid-dev)
if (( ${#need[@]} + ${#minimal[@]} == 0 )); then
    exit 0
fi
if [[ $EUID -ne 0 ]]; then
    echo "install-test-packages.sh: the tests need ${need[*]} ${minimal[*]}; run this as root to install them" >&2
    exit 2
fi
echo "installing ${need[*]} ${minimal[*]} (Debian packages the tests use)" >&2
apt-get update -q >/dev/null
if (( ${#need[@]} )); then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null
fi
if (( ${#minimal[@]} )); then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${minimal[@]}" >/dev/null
fi
