"""Benchmark the parallel-job simulator and cross-check it against AccaSim 1.1.3.

1. KTH-SP2 (27,992 jobs, 100 processors), EASY and FCFS: our simulator and AccaSim (EASY and
   FIFO dispatchers, first-fit allocation) on the same jobs in the same run; jobs per second,
   peak memory, mean wait, mean bounded slowdown, side by side with ratios; then a job-by-job
   comparison of the start times (our ``accasim_easy`` against AccaSim's EASY, our ``fcfs``
   against its FIFO; AccaSim never kills, so these runs use ``kill_at_estimate = false``).
2. HPC2N (202,876 jobs, 240 processors): our EASY and conservative, time and peak memory.

Both simulators see identical jobs: the trace is rewritten once to a plain SWF file in a
temporary folder with the fields AccaSim reads set to what ours uses (size from allocated
processors, unknown estimates as the runtime). Peak memory is measured with tracemalloc
(Python allocations during the simulation, the trace already loaded).

Usage: python scripts/bench_jobs.py [--workloads DIR] [--skip-accasim] [--skip-hpc2n]
(DIR holds the full traces; default: the workloads folder, ``$CAMPAIGN_WORKLOADS`` or the
per-user cache that ``campaign workloads fetch NAME`` fills.)
"""

from __future__ import annotations

import argparse
import collections
import collections.abc
import gc
import json
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

from campaign.models.rigid.feasibility import check_feasible
from campaign.models.rigid.metrics import schedule_metrics
from campaign.models.rigid.simulate import run_schedule
from campaign.models.rigid.swf import read_swf
from campaign.models.rigid.workload import Workload, from_trace
from campaign.models.rigid.workloads import workloads_folder

KTH = "KTH-SP2-1996-2.1-cln.swf.gz"
HPC2N = "HPC2N-2002-2.1-cln.swf.gz"


def measure(function):
    """Run ``function()`` once; return (result, seconds, peak traced MiB)."""
    gc.collect()
    tracemalloc.start()
    begin = time.perf_counter()
    result = function()
    seconds = time.perf_counter() - begin
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return result, seconds, peak


def measure_time(function, repeat: int = 1):
    """Best wall time of ``repeat`` runs, without tracing (tracemalloc slows Python down)."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        begin = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - begin)
    return result, best


def ours(workload: Workload, processors: int, scheduler: str, kill: bool):
    return run_schedule(workload, processors, scheduler, "user", kill)


def write_plain_swf(workload: Workload, processors: int, path: Path) -> None:
    """The jobs exactly as our simulator sees them, in SWF for AccaSim."""
    estimate = np.where(np.isfinite(workload.estimate), workload.estimate, workload.runtime)
    with open(path, "w") as out:
        out.write(f"; MaxProcs: {processors}\n; MaxNodes: {processors}\n")
        for k in range(len(workload)):
            size = int(workload.size[k])
            out.write(
                f"{k + 1} {int(workload.submit[k])} -1 {int(workload.runtime[k])} {size} -1 -1 "
                f"{size} {int(estimate[k])} -1 1 {int(workload.user[k])} 1 -1 1 -1 -1 -1\n"
            )


def import_accasim():
    """AccaSim 1.1.3 on Python 3.10+ needs the old ``collections`` aliases."""
    for name in (
        "Mapping",
        "MutableMapping",
        "Sequence",
        "MutableSequence",
        "Iterable",
        "Callable",
        "Set",
        "MutableSet",
        "Hashable",
    ):
        if not hasattr(collections, name):
            setattr(collections, name, getattr(collections.abc, name))
    import accasim  # noqa: F401
    from accasim.base.allocator_class import FirstFit
    from accasim.base.scheduler_class import EASYBackfilling, FirstInFirstOut
    from accasim.base.simulator_class import Simulator

    return Simulator, FirstFit, EASYBackfilling, FirstInFirstOut


def run_accasim(swf: Path, processors: int, dispatcher_name: str, folder: Path):
    """Simulate with AccaSim; returns {job number: (start, end)}."""
    Simulator, FirstFit, EASYBackfilling, FirstInFirstOut = import_accasim()
    from accasim.base.event_class import EventManager

    records: dict[int, tuple[float, float]] = {}
    finish = EventManager.finish_event

    def recording_finish(manager, event):
        finish(manager, event)
        records[int(event.id)] = (event.start_time, event.end_time)

    config = folder / "system.config"
    system = {
        "groups": {"g": {"core": 1}},
        "resources": {"g": processors},
        "equivalence": {"processor": {"core": 1}},
        "start_time": 0,
    }
    config.write_text(json.dumps(system))
    dispatcher = (
        EASYBackfilling(FirstFit()) if dispatcher_name == "EASY" else FirstInFirstOut(FirstFit())
    )
    simulator = Simulator(
        str(swf),
        str(config),
        dispatcher,
        RESULTS_FOLDER_PATH=str(folder / f"results-{dispatcher_name}"),
        scheduling_output=False,
        pprint_output=False,
        benchmark_output=False,
        statistics_output=False,
        show_statistics=False,
    )
    devnull = open(os.devnull, "w")
    saved = sys.stdout
    sys.stdout = devnull
    EventManager.finish_event = recording_finish
    try:
        simulator.start_simulation()
    finally:
        EventManager.finish_event = finish
        sys.stdout = saved
        devnull.close()
    return records


def accasim_metrics(records, workload: Workload):
    start = np.array([records[k + 1][0] for k in range(len(workload))], dtype=float)
    end = np.array([records[k + 1][1] for k in range(len(workload))], dtype=float)
    wait = start - workload.submit
    response = end - workload.submit
    p = end - start
    bsld = np.maximum(response / np.maximum(p, 10.0), 1.0)
    return start, float(wait.mean()), float(bsld.mean())


def compare_jobs(ours_start, theirs_start, workload: Workload, label: str) -> None:
    diff = ours_start - theirs_start
    same = np.abs(diff) < 1e-6
    print(f"  {label}: {int(same.sum())}/{len(same)} jobs start at the same time", end="")
    if same.all():
        print(" (identical schedules)")
        return
    first = int(np.argmax(~same))
    print(
        f"; first difference: job {first + 1} (submit {workload.submit[first]:.0f}, size "
        f"{workload.size[first]}, runtime {workload.runtime[first]:.0f}): ours "
        f"{ours_start[first]:.0f}, AccaSim {theirs_start[first]:.0f}"
    )


def bench_kth(folder: Path, skip_accasim: bool) -> None:
    trace = read_swf(folder / KTH)
    workload, _ = from_trace(trace)
    processors = workload.processors
    print(f"\n== KTH-SP2: {len(workload)} jobs, {processors} processors ==")
    rows = []
    schedules = {}
    for name, scheduler in (("EASY", "easy"), ("FCFS", "fcfs")):
        result, seconds = measure_time(
            lambda s=scheduler: ours(workload, processors, s, True), repeat=3
        )
        _, _, peak = measure(lambda s=scheduler: ours(workload, processors, s, True))
        check_feasible(result)
        m = schedule_metrics(result)
        rows.append(("ours", name, seconds, peak, m["mean_wait"], m["mean_bsld"]))
        variant = "accasim_easy" if name == "EASY" else "fcfs"
        nokill, same_seconds = measure_time(
            lambda v=variant: ours(workload, processors, v, False), repeat=3
        )
        check_feasible(nokill)
        schedules[name] = nokill
        mk = schedule_metrics(nokill)
        rows.append(
            (f"ours {variant}, no kill", name, same_seconds, None, mk["mean_wait"], mk["mean_bsld"])
        )
    accasim = {}
    if skip_accasim:
        print("AccaSim: skipped (--skip-accasim)")
    else:
        try:
            import_accasim()
            import importlib.metadata

            version = importlib.metadata.version("accasim")
            with tempfile.TemporaryDirectory() as tmp:
                tmp_path = Path(tmp)
                swf = tmp_path / "kth.swf"
                write_plain_swf(workload, processors, swf)
                for name in ("EASY", "FCFS"):
                    dispatcher = "EASY" if name == "EASY" else "FIFO"
                    records, seconds, peak = measure(
                        lambda d=dispatcher: run_accasim(swf, processors, d, tmp_path)
                    )
                    # Timing without tracemalloc, for a fair speed ratio.
                    _, seconds = measure_time(
                        lambda d=dispatcher: run_accasim(swf, processors, d, tmp_path)
                    )
                    start, wait, bsld = accasim_metrics(records, workload)
                    accasim[name] = (seconds, peak, wait, bsld, start)
                    rows.append((f"AccaSim {version}", name, seconds, peak, wait, bsld))
        except Exception as error:  # report, never hide, why the peer could not run
            print(f"AccaSim could not be run: {type(error).__name__}: {error}")
    print(
        f"{'simulator':28} {'sched':5} {'seconds':>8} {'jobs/s':>9} {'peak MiB':>9} "
        f"{'mean_wait s':>12} {'mean_bsld':>10}"
    )
    for who, name, seconds, peak, wait, bsld in rows:
        speed = f"{len(workload) / seconds:9.0f}" if seconds else f"{'':>9}"
        sec = f"{seconds:8.3f}" if seconds else f"{'':>8}"
        mem = f"{peak:9.1f}" if peak else f"{'':>9}"
        print(f"{who:28} {name:5} {sec} {speed} {mem} {wait:12.1f} {bsld:10.3f}")
    if accasim:
        print("ratios (AccaSim / ours):")
        for name in ("EASY", "FCFS"):
            ours_row = next(r for r in rows if r[0] == "ours" and r[1] == name)
            same_rule = next(r for r in rows if r[0].endswith("no kill") and r[1] == name)
            seconds, peak = accasim[name][:2]
            print(
                f"  {name}: time x{seconds / ours_row[2]:.1f} (x{seconds / same_rule[2]:.1f} "
                f"against {same_rule[0]}), peak memory x{peak / ours_row[3]:.1f}"
            )
        print("job-by-job cross-check (AccaSim never kills: ours with kill_at_estimate=false):")
        for name, label in (("EASY", "accasim_easy vs AccaSim EASY"), ("FCFS", "fcfs vs FIFO")):
            ours_start = schedules[name].start
            compare_jobs(ours_start, accasim[name][4], workload, label)
            mk = schedule_metrics(schedules[name])
            wait, bsld = accasim[name][2:4]
            print(
                f"    mean_wait ours {mk['mean_wait']:.3f} vs {wait:.3f} "
                f"({100 * (mk['mean_wait'] / wait - 1):+.3f}%), mean_bsld ours "
                f"{mk['mean_bsld']:.4f} vs {bsld:.4f} ({100 * (mk['mean_bsld'] / bsld - 1):+.3f}%)"
            )


def _status_kib(field: str) -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return float(line.split()[1])
    return float("nan")


def rss_rise_in_fresh_process(path: Path, scheduler: str) -> float:
    """MiB by which a fresh process's peak resident memory rises during the simulation, above
    its resident memory with the trace loaded (Linux: the peak is reset through
    /proc/self/clear_refs first, so parsing does not count; NaN elsewhere). A fresh process,
    because a process that already ran simulations reuses memory it freed."""
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(_rss_rise, (str(path), scheduler))


def _rss_rise(path: str, scheduler: str) -> float:
    workload, _ = from_trace(read_swf(path))
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        before = _status_kib("VmRSS")
    except OSError:
        return float("nan")
    ours(workload, workload.processors, scheduler, True)
    return (_status_kib("VmHWM") - before) / 1024


def bench_hpc2n(folder: Path) -> None:
    trace = read_swf(folder / HPC2N)
    workload, _ = from_trace(trace)
    processors = workload.processors
    print(f"\n== HPC2N: {len(workload)} jobs, {processors} processors (ours only) ==")
    print(
        f"{'sched':13} {'seconds':>8} {'jobs/s':>9} {'peak MiB':>9} {'RSS rise MiB':>13} "
        f"{'mean_wait s':>12} {'mean_bsld':>10}"
    )
    for scheduler in ("easy", "conservative"):
        result, seconds = measure_time(lambda s=scheduler: ours(workload, processors, s, True))
        check_feasible(result)
        rise = rss_rise_in_fresh_process(folder / HPC2N, scheduler)
        peak = float("nan")
        if scheduler == "easy":
            _, _, peak = measure(lambda s=scheduler: ours(workload, processors, s, True))
        m = schedule_metrics(result)
        print(
            f"{scheduler:13} {seconds:8.2f} {len(workload) / seconds:9.0f} {peak:9.1f} "
            f"{rise:13.1f} {m['mean_wait']:12.1f} {m['mean_bsld']:10.3f}"
        )
    print(
        "(peak MiB: Python allocations traced by tracemalloc during the run; not run for\n"
        " conservative, where tracing slows the run about ten times. RSS rise: in a fresh\n"
        " process, the peak resident memory of the run above that with the trace loaded.)"
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workloads", type=Path, default=workloads_folder())
    parser.add_argument("--skip-accasim", action="store_true")
    parser.add_argument("--skip-hpc2n", action="store_true")
    args = parser.parse_args(argv)
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, {os.cpu_count()} CPUs")
    print("ours: best of 3 runs; AccaSim: one run; peak memory: tracemalloc, separate run")
    bench_kth(args.workloads, args.skip_accasim)
    if not args.skip_hpc2n:
        bench_hpc2n(args.workloads)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
