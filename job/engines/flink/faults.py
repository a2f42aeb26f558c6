"""Failure injection for fault-tolerance tests and demonstrations.

:class:`FailOnce` wraps a river classifier and raises once, after a given number of training
calls, in whichever fold of whichever subtask gets there first: the marker file is claimed
atomically, so a restarted job (which replays from its last checkpoint) does not fail again.
Given ``checkpoints`` (the run's ``engine.checkpoint_dir``), it waits until a checkpoint there
is complete, so that the restart surely restores state rather than starting afresh.
Use it like any learner::

    learners:
      - name: ht
        model: foldstream.job.engines.flink.faults.FailOnce
        params: {model: {model: river.tree.HoeffdingTreeClassifier}, after: 5000, marker: /tmp/f}
"""

from __future__ import annotations

import os

from pathlib import Path

from river import base


CHECK_EVERY = 20
"""How often (training calls) :class:`FailOnce` looks for a completed checkpoint."""


class InjectedFailure(BaseException):
    """The failure :class:`FailOnce` raises: a crash of the task, not a learner's bug.

    A ``BaseException``, so that the quarantine of a learner that raises an ``Exception``
    (:class:`foldstream.operators.stages.learner.LearnerTask`) lets it through and Flink restarts
    the job from its last checkpoint, which is what the fault-tolerance tests exercise.
    """


class FailOnce(base.Classifier):
    """A classifier that behaves as ``model`` but fails once after ``after`` training calls.

    >>> from river import naive_bayes
    >>> import tempfile, pathlib
    >>> marker = pathlib.Path(tempfile.mkdtemp()) / "failed"
    >>> m = FailOnce(naive_bayes.GaussianNB(), after=2, marker=str(marker))
    >>> m.learn_one({"a": 1.0}, "x")
    >>> m.learn_one({"a": 2.0}, "y")
    Traceback (most recent call last):
    ...
    foldstream.job.engines.flink.faults.InjectedFailure: injected failure after 2 training calls
    >>> m.learn_one({"a": 2.0}, "y")  # the marker exists: never again

    With ``checkpoints``, not before a checkpoint under that folder is complete:

    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> m = FailOnce(naive_bayes.GaussianNB(), after=1, marker=str(root / "m"), checkpoints=str(root))
    >>> m.learn_one({"a": 1.0}, "x")  # no checkpoint yet
    >>> (root / "job" / "chk-1").mkdir(parents=True); (root / "job" / "chk-1" / "_metadata").touch()
    >>> for _ in range(CHECK_EVERY):
    ...     m.learn_one({"a": 1.0}, "x")
    Traceback (most recent call last):
    ...
    foldstream.job.engines.flink.faults.InjectedFailure: injected failure after 1 training calls
    """

    def __init__(self, model: base.Classifier, after: int, marker: str,
                 checkpoints: str | None = None):
        self.model = model
        self.after = after
        self.marker = marker
        self.checkpoints = checkpoints
        self._calls = 0
        self._spent = False  # failed once, or found the marker taken

    def predict_proba_one(self, x):
        return self.model.predict_proba_one(x)

    def predict_one(self, x):
        return self.model.predict_one(x)

    def learn_one(self, x, y, w=1):
        self._calls += 1
        if self._due() and self._claim():
            raise InjectedFailure(f"injected failure after {self.after} training calls")
        for _ in range(int(w)):
            self.model.learn_one(x, y)

    def _due(self) -> bool:
        if self._spent or self._calls < self.after:
            return False
        if self.checkpoints is None:
            return self._calls == self.after
        # a completed checkpoint (``<job>/chk-N/_metadata``), looked for every CHECK_EVERY calls
        return (self._calls - self.after) % CHECK_EVERY == 0 and \
            any(Path(self.checkpoints).glob("**/chk-*/_metadata"))

    def _claim(self) -> bool:
        try:
            os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            self._spent = True
            return False
        self._spent = True
        return True
