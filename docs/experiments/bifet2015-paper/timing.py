"""Bifet et al.'s timing rows (Table 2, "Avg. time"): the cost of each validation mode, measured
as CPU seconds per run with the modes interleaved on the same configuration.

The paper gives seconds per run on SAMOA, prequential and non-prequential: cv 1.48 times
bootstrap and split 0.13 times (prequential), 1.25 and 0.47 times (non-prequential). Seconds on
a shared machine say more about the other engineers than about the modes, so this script
measures ratios: every run is one (stream, mode, design) of
``conf/experiments/bifet2015-paper.yaml`` (replication 0, the same seeds as the results files'
replication 0, or another), run by the experiment's own
:func:`~foldstream.job.tools.experiment.run.run_replication` in this one process, its CPU seconds
(every thread, the JVM's included) from ``time.process_time``. A warm-up run starts the JVM
first, and each stream's six runs follow one another (the designs alternate, the modes rotate),
so a change of load hits every mode alike. One line per run is appended to ``timing.jsonl``
(a stopped run resumes: the runs found there are skipped)::

    nice -n 10 python docs/experiments/bifet2015-paper/timing.py [--replication R] [STREAM ...]

(default streams: :data:`STREAMS`; replication 0 by default, another gives another round on
other seeds). ``tables.py`` reads the file into its timing table.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONFIG = HERE.parents[2] / "conf" / "experiments" / "bifet2015-paper.yaml"
TIMING = HERE / "timing.jsonl"
#: the streams timed by default: four of the twelve, the cheaper ones (Covertype and LED cost
#: three to five times as much a run; their modes' ratios are in the non-prequential results)
STREAMS = ("elec", "sea50", "hyp10_0.001", "rbf50_0.001")
DESIGNS = (("prequential", True), ("non-prequential", False))


@dataclass(frozen=True)
class TimedRun:
    """One timed run: which stream, mode and design, its CPU and wall seconds, and its order
    (``order``: its place among the runs of this file, counted from 0)."""

    dataset: str
    mode: str
    design: str
    replication: int
    order: int
    cpu_time_s: float
    wall_time_s: float

    @property
    def key(self) -> tuple[str, str, str, int]:
        return self.dataset, self.mode, self.design, self.replication


def read_timing(path: Path = TIMING) -> list[TimedRun]:
    """The runs of a timing file (none if it does not exist)."""
    if not path.exists():
        return []
    return [TimedRun(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def plan(streams: list[str], modes: list[str]) -> list[tuple[str, str, str, bool]]:
    """The runs in their order: per stream, the designs alternating and the modes rotating.

    >>> plan(["a", "b"], ["bootstrap", "cv", "split"])[:4]  # doctest: +NORMALIZE_WHITESPACE
    [('a', 'bootstrap', 'prequential', True), ('a', 'bootstrap', 'non-prequential', False),
     ('a', 'cv', 'prequential', True), ('a', 'cv', 'non-prequential', False)]
    >>> [m for _, m, d, _ in plan(["a", "b"], ["bootstrap", "cv", "split"]) if d == "prequential"]
    ['bootstrap', 'cv', 'split', 'cv', 'split', 'bootstrap']
    """
    order = []
    for i, stream in enumerate(streams):
        rotated = modes[i % len(modes):] + modes[:i % len(modes)]
        for mode in rotated:
            designs = DESIGNS if i % 2 == 0 else DESIGNS[::-1]
            order += [(stream, mode, name, prequential) for name, prequential in designs]
    return order


def run(streams: list[str], path: Path = TIMING, replication: int = 0) -> list[TimedRun]:
    """Time the runs of :func:`plan` missing from ``path``, appending a line as each ends."""
    from foldstream.job.tools.experiment import load_experiment
    from foldstream.job.tools.experiment.design import Task
    from foldstream.job.tools.experiment.run import run_replication

    done = read_timing(path)
    finished = {r.key for r in done}
    experiments = {prequential: load_experiment(CONFIG, [f"prequential={str(prequential).lower()}"])
                   for _, prequential in DESIGNS}
    modes = list(experiments[True].modes)
    todo = [p for p in plan(streams, modes) if (p[0], p[1], p[2], replication)
            not in finished]
    if not todo:
        return done
    warm = load_experiment(CONFIG, ["n=500", "report_every=500"])  # the JVM starts here
    run_replication(warm, Task(todo[0][0], "split", replication))
    with path.open("a", encoding="utf-8") as handle:
        for stream, mode, design, prequential in todo:
            result = run_replication(experiments[prequential], Task(stream, mode, replication))
            timed = TimedRun(stream, mode, design, replication, len(done),
                             result.cpu_time_s, result.wall_time_s)
            handle.write(json.dumps(asdict(timed)) + "\n")
            handle.flush()
            done.append(timed)
            print(f"{stream} {mode} {design}: {timed.cpu_time_s:.1f} CPU-s, "
                  f"{timed.wall_time_s:.1f} s wall", flush=True)
    return done


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("streams", nargs="*", default=list(STREAMS), help="the streams to time")
    parser.add_argument("--replication", type=int, default=0, help="whose seeds (default 0)")
    args = parser.parse_args()
    run(args.streams, replication=args.replication)
