"""The measures of docs/method.md §5, from one window's counts.

Everything is read off one weighted confusion matrix (rows: true class, columns: predicted
class) plus the weights the two baselines got right in the same window. A measure whose
denominator is 0 is undefined and comes back as ``None``.

The formulas that :func:`foldstream.operators.stats.normalization.binary_measure` evaluates too (for a
whole grid of binary matrices at once) are written once, below: they take plain floats, as
:func:`compute` gives them, or numpy arrays. A ratio comes back as a numerator and a
denominator, and the caller says what a denominator of 0 means (``None`` here, ``NaN`` on a
grid). Kappa and MCC are the exception: on a grid they are computed in the cells' closed form,
see :func:`~foldstream.operators.stats.normalization.binary_measure`.
"""

from __future__ import annotations

import math
from typing import Any, Hashable, Sequence

from foldstream.operators.stats.windows import Counts

#: The scalar measures every ``measures`` record carries, in output order. Per-class recall
#: follows them as ``recall[<label>]`` for every class of the stream.
MEASURES = (
    "accuracy",
    "kappa",
    "kappa_m",
    "kappa_per",
    "kappa_plus",
    "arithmetic_mean",
    "geometric_mean",
    "harmonic_mean",
    "balanced_accuracy",
    "precision",
    "recall",
    "f1",
    "mcc",
)


# --------------------------------------------------------------------------- the formulas, once
# Each takes floats or numpy arrays (``Any`` below: either) and only adds, multiplies and
# divides, so an array gives, element by element, the very float a scalar gives.


def f1_terms(tp: Any, fp: Any, fn: Any) -> tuple[Any, Any]:
    """F1 of the positive class as ``(numerator, denominator)``: ``2 tp / (2 tp + fp + fn)``.

    >>> f1_terms(40.0, 5.0, 30.0)
    (80.0, 115.0)
    """
    return 2 * tp, 2 * tp + fp + fn


def geometric_mean(values: Sequence[Any]) -> Any:
    """``(v_1 * ... * v_m) ** (1 / m)``: the G-mean of per-class recalls.

    >>> round(geometric_mean([0.25, 1.0]), 12)
    0.5
    """
    return math.prod(values) ** (1.0 / len(values))


def arithmetic_mean(values: Sequence[Any]) -> Any:
    """``(v_1 + ... + v_m) / m``: the balanced accuracy of per-class recalls."""
    return sum(values) / len(values)


# ------------------------------------------------------------------------------ one window
def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


# Below this, 1 - baseline is rounding error of a faded window whose baseline is perfect: 0/0.
_EPSILON = 1e-12


def _kappa_against(p0: float | None, baseline: float | None) -> float | None:
    if p0 is None or baseline is None or 1.0 - baseline <= _EPSILON:
        return None
    return (p0 - baseline) / (1.0 - baseline)


def class_recall_name(label: Hashable) -> str:
    return f"recall[{label}]"


def compute(counts: Counts, classes: Sequence[Hashable], positive: int = 0) -> dict[str, float | None]:
    """All measures of a window.

    Parameters
    ----------
    counts
        The window's counts; class codes index ``classes``.
    classes
        The stream's labels in order of first appearance.
    positive
        The code of the positive class for ``precision``, ``recall`` and ``f1`` when the stream
        has at most two classes (-1: not seen yet); with more classes they are macro averages.

    Examples
    --------
    Bifet et al. (2015), Table 5: the majority baseline is right on 70 of 100 examples.

    >>> from foldstream.operators.stats.windows import Counts
    >>> cm = {(0, 0): 40.0, (0, 1): 30.0, (1, 0): 5.0, (1, 1): 25.0}
    >>> m = compute(Counts(100.0, cm, {0: 70.0, 1: 30.0}, maj=70.0, per=50.0), ["+", "-"])
    >>> [round(m[k], 6) for k in ("accuracy", "kappa", "mcc", "recall[+]", "recall[-]")]
    [0.65, 0.326923, 0.372839, 0.571429, 0.833333]
    >>> [round(m[k], 6) for k in ("arithmetic_mean", "geometric_mean", "harmonic_mean", "kappa_m")]
    [0.702381, 0.690066, 0.677966, -0.166667]
    """
    n = counts.n
    cm = counts.cm
    n_classes = len(classes)
    rows = [counts.rows.get(c, 0.0) for c in range(n_classes)]
    cols = [0.0] * n_classes
    diag = [0.0] * n_classes
    for (t, p), w in cm.items():
        if p >= 0:
            cols[p] += w
            if t == p:
                diag[t] += w
    correct = sum(diag)

    p0 = _ratio(correct, n)
    pc = _ratio(sum(r * c for r, c in zip(rows, cols)), n * n)
    kappa = _kappa_against(p0, pc)
    kappa_m = _kappa_against(p0, _ratio(counts.maj, n))
    kappa_per = _kappa_against(p0, _ratio(counts.per, n))
    kappa_plus = (
        None if kappa is None or kappa_per is None else math.sqrt(max(0.0, kappa) * max(0.0, kappa_per))
    )

    recalls = [diag[c] / rows[c] if rows[c] > 0 else None for c in range(n_classes)]
    present = [r for r in recalls if r is not None]
    if present:
        arithmetic = arithmetic_mean(present)
        geometric = geometric_mean(present)
        harmonic = 0.0 if min(present) == 0.0 else len(present) / sum(1.0 / r for r in present)
    else:
        arithmetic = geometric = harmonic = None

    if n_classes <= 2:
        if 0 <= positive < n_classes:
            tp = diag[positive]
            precision = _ratio(tp, cols[positive])
            recall = _ratio(tp, rows[positive])
            f1 = _ratio(*f1_terms(tp, cols[positive] - tp, rows[positive] - tp))
        else:
            precision = recall = f1 = None
    else:
        precision = _mean([_ratio(diag[c], cols[c]) for c in range(n_classes)])
        recall = arithmetic
        f1 = _mean([
            _ratio(2 * diag[c], cols[c] + rows[c]) if rows[c] > 0 or cols[c] > 0 else None
            for c in range(n_classes)
        ])

    # Matthews correlation; for more than two classes Gorodkin's R_K, which reduces to it.
    cov_pred = n * n - sum(c * c for c in cols)
    cov_true = n * n - sum(r * r for r in rows)
    mcc = _ratio(n * correct - sum(r * c for r, c in zip(rows, cols)), math.sqrt(cov_pred * cov_true)) \
        if cov_pred > _EPSILON * n * n and cov_true > _EPSILON * n * n else None

    values: dict[str, float | None] = {
        "accuracy": p0,
        "kappa": kappa,
        "kappa_m": kappa_m,
        "kappa_per": kappa_per,
        "kappa_plus": kappa_plus,
        "arithmetic_mean": arithmetic,
        "geometric_mean": geometric,
        "harmonic_mean": harmonic,
        "balanced_accuracy": arithmetic,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "mcc": mcc,
    }
    for label, r in zip(classes, recalls):
        values[class_recall_name(label)] = r
    return values


def _mean(values: Sequence[float | None]) -> float | None:
    defined = [v for v in values if v is not None]
    return sum(defined) / len(defined) if defined else None


def binary_counts(counts: Counts, positive: int, n_classes: int) -> tuple[float, float, float, float] | None:
    """``(tp, fn, fp, tn)`` of a window of a stream with at most two classes, else ``None``."""
    if n_classes > 2 or not 0 <= positive < n_classes:
        return None
    tp = fn = fp = tn = 0.0
    for (t, p), w in counts.cm.items():
        if t == positive:
            if p == positive:
                tp += w
            else:
                fn += w
        elif p == positive:
            fp += w
        else:
            tn += w
    return tp, fn, fp, tn


#: The text forms YAML (1.1, as PyYAML reads a configuration) takes for true and false.
_YAML_BOOLS = {**dict.fromkeys("yes Yes YES true True TRUE on On ON".split(), True),
               **dict.fromkeys("no No NO false False FALSE off Off OFF".split(), False)}


def _as_yaml_reads_it(label: Hashable) -> tuple[type, Hashable]:
    """A label as YAML would read its text: ``"1"`` -> 1, ``"yes"`` -> True; tagged with its type
    so that True and 1, equal in Python, stay apart."""
    if isinstance(label, str):
        text = label.strip()
        if text in _YAML_BOOLS:
            label = _YAML_BOOLS[text]
        elif text.isascii() and (text[1:] if text[:1] in ("+", "-") else text).isdigit():
            label = int(text)
        else:
            label = text
    return type(label), label


def positive_code(classes: list[Hashable], positive: Hashable | None) -> int:
    """The code of ``evaluation.positive_class`` among the stream's ``classes`` (-1: not seen).

    ``None`` is the class seen first (code 0). Otherwise a label equal to ``positive``, else the
    first label whose text reads, as YAML reads a configuration, as ``positive`` does: labels are
    text in CSV and ARFF files but typed in JSON (files, Kafka) and generators, and YAML types
    the configuration's value, so ``positive_class: 1`` must find the CSV label ``"1"`` and
    ``positive_class: "1"`` the JSON label ``1``; ``true`` (``yes``, ``on``) finds ``"true"``,
    ``"True"`` or ``"yes"``.

    >>> positive_code(["0", "1"], 1), positive_code([0, 1], "1"), positive_code(["no", "yes"], True)
    (1, 1, 1)
    >>> positive_code(["b", "a"], None), positive_code(["b", "a"], "a"), positive_code(["0", "1"], 2)
    (0, 1, -1)
    >>> positive_code(["1", "True"], True)  # True == 1 in Python, not in a text file
    1
    """
    if positive is None:
        return 0
    if positive in classes:
        return classes.index(positive)
    wanted = _as_yaml_reads_it(positive)
    for code, label in enumerate(classes):
        if _as_yaml_reads_it(label) == wanted:
            return code
    return -1
