"""The fold tests at table cost: scipy's tests called per report against operators/stats/significance.py.

    .venv/bin/python bench/bench_stats.py [--calls N] [--folds K]
    .venv/bin/python bench/bench_stats.py --replication CONFIG DATASET MODE [--set key=value ...]
                                          [--profile FILE]

Without ``--replication``: calls per second (CPU time) of each fold test on fold accuracies of
two learners over ``--folds`` folds (accuracies over 2,000 examples, so that ties and zeros are
as frequent as in the experiments), the way operators/stats/significance.py called scipy before (``scipy``)
and as it computes them now (``stats``): the Wilcoxon signed-rank test, the sign test and
Friedman-Nemenyi.

With ``--replication``: CPU seconds of one experiment replication (``foldstream experiment``'s
unit, a (dataset, mode, replication) run, :func:`foldstream.job.tools.experiment.
run_replication`), once with the fold tests calling scipy as before and once as they are now,
in one process (the order alternates over ``--repeat``; the best of each counts). Both give the
same result (checked). ``--profile FILE`` writes a cProfile of each (FILE.scipy, FILE.stats).

With ``--replication ... --before REV``: the replication as the code of revision ``REV`` runs
it (its tree from ``git archive``, imported as ``foldstream`` in a process of its own) against
the code of this checkout, in turns, ``--repeat`` rounds; each process runs the replication
``--runs`` times, so that the first ("cold": imports of the learners, a MOA learner's JVM,
numba's cache) and the later ones ("warm": what each further replication of an experiment's
worker costs) are apart. ``--now-set key=value`` applies to this checkout's side only (for
example the same design in MOA's terms, which ``REV`` may not know)::

    .venv/bin/python bench/bench_stats.py --replication conf/experiments/bifet2015-table2.yaml \
        elec bootstrap --before 5d26750 --repeat 3 \
        --now-set "learner={name: ozabag3_ht, model: moa.classifiers.meta.OzaBag, \
                   options: '-l trees.HoeffdingTree -s 3', params: {seed: 1}}" \
        --now-set conditions.exact_null.model=moa.classifiers.trees.HoeffdingTree
"""

from __future__ import annotations

import argparse
import cProfile
import io
import sys
import tempfile
import time
import warnings
from contextlib import contextmanager, nullcontext
from pathlib import Path

import numpy as np
import scipy.stats

from foldstream.operators.stats import significance as stats


# ------------------------------------------------------------------ the old, scipy-per-call way
def scipy_wilcoxon(a, b, alpha):
    """operators/stats.wilcoxon before the tables: scipy's test on every call."""
    xs, ys = stats._pairs(a, b)
    if not xs or all(x - y == 0 for x, y in zip(xs, ys)):
        return {"statistic": None, "p_value": None, "reject": False}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        res = scipy.stats.wilcoxon(xs, ys)
    p_value = stats._float_or_none(res.pvalue)
    return {"statistic": stats._float_or_none(res.statistic), "p_value": p_value,
            "reject": bool(p_value is not None and p_value <= alpha)}


def scipy_sign_pvalue(wins, n):
    """The sign test's p-value before the cache."""
    return float(scipy.stats.binomtest(wins, n, 0.5).pvalue)


@contextmanager
def scipy_per_call():
    """operators/stats as it was: the fold tests call scipy every time."""
    saved = stats.wilcoxon, stats._sign_pvalue
    stats.wilcoxon, stats._sign_pvalue = scipy_wilcoxon, scipy_sign_pvalue
    try:
        yield
    finally:
        stats.wilcoxon, stats._sign_pvalue = saved


# ------------------------------------------------------------------------------ per call
def fold_values(rng, folds: int, count: int) -> list[tuple[list[float], list[float]]]:
    """Pairs of fold accuracies over 2,000 examples, B about as good as A."""
    out = []
    for _ in range(count):
        a = rng.integers(1500, 1540, size=folds) / 2000
        b = rng.integers(1500, 1540, size=folds) / 2000
        out.append((list(a), list(b)))
    return out


def rate(call, pairs, seconds: float = 2.0) -> float:
    """Calls per CPU second of ``call(a, b)`` over ``pairs`` (at least ``seconds`` long)."""
    done, started = 0, time.process_time()
    while True:
        for a, b in pairs:
            call(a, b)
        done += len(pairs)
        elapsed = time.process_time() - started
        if elapsed >= seconds:
            return done / elapsed


def per_call(folds: int, calls: int) -> None:
    rng = np.random.default_rng(1)
    pairs = fold_values(rng, folds, calls)
    triples = [[a, b, list(rng.integers(1500, 1540, size=folds) / 2000)] for a, b in pairs]
    tests = {
        "wilcoxon": lambda a, b: stats.wilcoxon(a, b, 0.05),
        "sign test": lambda a, b: stats.sign_test(a, b, 0.05),
        "friedman-nemenyi (3 learners)": lambda a, b: stats.friedman_nemenyi(
            next(it), ["a", "b", "c"], 0.05),
    }
    print(f"{folds} folds, calls per CPU second (scipy per call -> operators/stats/significance.py now)")
    for name, call in tests.items():
        it = iter(triples * 10**6)
        with scipy_per_call():
            old = rate(call, pairs)
        it = iter(triples * 10**6)
        new = rate(call, pairs)
        print(f"  {name:32s} {old:12,.0f} -> {new:12,.0f}   x{new / old:,.0f}")
    same = all(stats.wilcoxon(a, b, 0.05) == scipy_wilcoxon(a, b, 0.05) for a, b in pairs)
    print(f"  same results as scipy on all {len(pairs)} pairs: {same}")


# ------------------------------------------------------------------------------ replication
def replication(config: str, dataset: str, mode: str, overrides: list[str], repeat: int,
                profile: str | None) -> None:
    from foldstream.job.tools.experiment import Task, load_experiment, run_replication

    experiment = load_experiment(config, overrides)
    task = Task(dataset, mode, 0)
    best: dict[str, float] = {}
    outcomes = {}
    for r in range(repeat):
        for way in (("scipy", "stats") if r % 2 == 0 else ("stats", "scipy")):
            profiler = cProfile.Profile() if profile else None
            with scipy_per_call() if way == "scipy" else nullcontext():
                started = time.process_time()
                if profiler:
                    profiler.enable()
                result = run_replication(experiment, task)
                if profiler:
                    profiler.disable()
                    profiler.dump_stats(f"{profile}.{way}")
                cpu = time.process_time() - started
            best[way] = min(best.get(way, cpu), cpu)
            outcomes[way] = result.outcomes
            print(f"  {way:5s} {cpu:8.2f} CPU-s", flush=True)
    assert outcomes["scipy"] == outcomes["stats"], "the two ways disagree"
    print(f"{config} {dataset} {mode} #0: scipy per call {best['scipy']:.2f} CPU-s, "
          f"tables {best['stats']:.2f} CPU-s: x{best['scipy'] / best['stats']:.2f}")


# ------------------------------------------------------------------- against a revision
_RUN_ONE = """
import hashlib, json, sys, time
from dataclasses import asdict
from foldstream.job.tools.experiment import Task, load_experiment, run_replication
config, dataset, mode, runs, overrides = json.loads(sys.argv[1])
experiment = load_experiment(config, overrides)
for _ in range(runs):
    started = time.process_time()
    result = run_replication(experiment, Task(dataset, mode, 0))
    cpu = time.process_time() - started
    outcomes = {c: {t: asdict(o) for t, o in tests.items()} for c, tests in result.outcomes.items()}
    digest = hashlib.sha1(json.dumps(outcomes, sort_keys=True).encode()).hexdigest()[:12]
    print(json.dumps({"cpu": cpu, "outcomes": digest}), flush=True)
"""


def revision_tree(rev: str, into: Path) -> Path:
    """``rev``'s tree under ``into``, laid out as the installed package (pyproject.toml's
    package-dir: job/public is ``foldstream``, the top-level folders its subpackages); the
    folder to put on ``PYTHONPATH``."""
    import shutil
    import subprocess
    import tarfile

    root = Path(__file__).resolve().parents[1]
    archive = subprocess.run(["git", "-C", str(root), "archive", rev], check=True,
                             capture_output=True).stdout
    tree = into / "tree"
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(tree, filter="data")
    package = into / "path" / "foldstream"
    shutil.copytree(tree / "job" / "public", package)
    for folder in ("job", "operators", "connectors", "conf"):
        (package / folder).symlink_to(tree / folder, target_is_directory=True)
    return package.parent


def run_side(path: Path | None, config: str, dataset: str, mode: str, runs: int,
             overrides: list[str]) -> list[dict]:
    """One process of ``runs`` replications, by the code on ``path`` (None: this checkout)."""
    import json
    import os
    import subprocess

    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = str(path)
    out = subprocess.run([sys.executable, "-c", _RUN_ONE,
                          json.dumps([str(Path(config).resolve()), dataset, mode, runs,
                                      overrides])],
                         check=True, capture_output=True, text=True, env=env,
                         cwd=tempfile.gettempdir()).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def against(config: str, dataset: str, mode: str, rev: str, overrides: list[str],
            now_overrides: list[str], repeat: int, runs: int) -> None:
    """The replication by ``rev``'s code and by this checkout's, in turns (the module
    docstring)."""
    sides: dict[str, dict[str, list[float]]] = {"before": {}, "now": {}}
    outcomes: dict[str, set[str]] = {"before": set(), "now": set()}
    with tempfile.TemporaryDirectory() as tmp:
        path = revision_tree(rev, Path(tmp))
        for r in range(repeat):
            for side in (("before", "now") if r % 2 == 0 else ("now", "before")):
                got = run_side(path if side == "before" else None, config, dataset, mode, runs,
                               overrides + (now_overrides if side == "now" else []))
                for i, one in enumerate(got):
                    sides[side].setdefault("cold" if i == 0 else "warm", []).append(one["cpu"])
                    outcomes[side].add(one["outcomes"])
                print(f"  {side:6s} " + ", ".join(f"{one['cpu']:.2f}" for one in got)
                      + " CPU-s", flush=True)
    same = outcomes["before"] == outcomes["now"]
    print(f"{config} {dataset} {mode} #0, {rev} against this checkout"
          f"{' with ' + ' '.join(now_overrides) if now_overrides else ''}: outcomes "
          f"{'the same' if same else 'differ (another design)'}")
    for look in ("cold", "warm"):
        if look in sides["now"] and look in sides["before"]:
            before, now = min(sides["before"][look]), min(sides["now"][look])
            print(f"  {look}: before {before:.2f} CPU-s, now {now:.2f} CPU-s: x{before / now:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=30, help="distinct fold vectors")
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--replication", nargs=3, metavar=("CONFIG", "DATASET", "MODE"))
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--profile", default=None, metavar="FILE")
    parser.add_argument("--before", default=None, metavar="REV",
                        help="--replication: against revision REV's code")
    parser.add_argument("--now-set", dest="now_overrides", action="append", default=[],
                        help="--before: an override for this checkout's side only")
    parser.add_argument("--runs", type=int, default=2,
                        help="--before: replications per process (the first is cold)")
    args = parser.parse_args()
    if args.replication and args.before:
        against(*args.replication, args.before, args.overrides, args.now_overrides,
                args.repeat, args.runs)
    elif args.replication:
        replication(*args.replication, args.overrides, args.repeat, args.profile)
    else:
        per_call(args.folds, args.calls)


if __name__ == "__main__":
    main()
