#!/usr/bin/env bash
# Every test, none skipped: installs what the tests need (Debian's chromium and SLURM packages,
# the Python test extra in .venv), then runs the batch-system tests (tests/slurm: a real
# single-node SLURM, mostly waiting on its jobs) beside the rest, the rest on three processes
# (pytest-xdist, a test file's tests together in one, the longest files first: tests/conftest.py;
# three even on two cores, as the tests spend much of their time waiting on the processes they
# start), and prints both reports.
# Extra arguments go to the main pytest run.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-test-packages.sh &  # Debian's packages and Python's, side by side
packages_pid=$!
python3 -m venv .venv && . .venv/bin/activate && pip install -q -e '.[test]' || exit $?
wait "$packages_pid" || exit $?
slurm_log=$(mktemp)
python -m pytest tests/slurm -p no:cacheprovider --durations=0 >"$slurm_log" 2>&1 &
slurm_pid=$!
python -m pytest --ignore=tests/slurm -n 3 --dist loadfile --no-loadscope-reorder "$@"
rest=$?
wait "$slurm_pid"
batch=$?
echo
echo "== the batch-system tests (tests/slurm), run beside the others =="
cat "$slurm_log"
rm -f "$slurm_log"
if (( rest != 0 )); then exit "$rest"; fi
exit "$batch"
