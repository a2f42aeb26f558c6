"""Failure injection for fault-tolerance tests and demonstrations.

:class:`FailOnce` wraps a river classifier and raises once, after a given number of training
calls, in whichever fold of whichever subtask gets there first: the marker file is claimed
atomically, so a restarted job (which replays from its last checkpoint) does not fail again.
Use it like any learner::

    learners:
      - name: ht
        model: foldstream.job.engines.flink.faults.FailOnce
        params: {model: {model: river.tree.HoeffdingTreeClassifier}, after: 5000, marker: /tmp/f}
"""

from __future__ import annotations

import os

from river import base


class InjectedFailure(BaseException):
    """The failure :class:`FailOnce` raises: a crash of the task, not a learner's bug.

    A ``BaseException``, so that the quarantine of a learner that raises an ``Exception``
    (:class:`foldstream.operators.learners.LearnerTask`) lets it through and Flink restarts
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
    """

    def __init__(self, model: base.Classifier, after: int, marker: str):
        self.model = model
        self.after = after
        self.marker = marker
        self._calls = 0

    def predict_proba_one(self, x):
        return self.model.predict_proba_one(x)

    def predict_one(self, x):
        return self.model.predict_one(x)

    def learn_one(self, x, y, w=1):
        self._calls += 1
        if self._calls == self.after and self._claim():
            raise InjectedFailure(f"injected failure after {self.after} training calls")
        for _ in range(int(w)):
            self.model.learn_one(x, y)

    def _claim(self) -> bool:
        try:
            os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return False
        return True
