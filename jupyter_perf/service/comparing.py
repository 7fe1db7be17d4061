"""``jp.compare(a, b)``: two runs (Runs, Analyses or run ids of the store) side by side.

    c = jp.compare("20261122-015800-3f9a1c", "20261122-020412-9be201")
    c.summary()              # analysis/compare.py's JSON digest
    jp.compare_html(c)       # one standalone offline page (the renderer and the payload)
    c                        # as a notebook cell's value: the comparison itself (the compare
                             # MIME payload, drawn by the extension; a short static fallback)

The store supplies what two runs alone cannot: the noise (the warm runs of A's code and
settings among the runs of its cell — same JupyterLab cell id, else label, else source —
by the one rule of ``analysis/series.py``, read by ``service/history.noise_for``) and a place
for the record of predictions
(``store/accuracy.py``): every comparison that has a prediction adds it there.

Bad input is one ``CompareError`` line with the next step: an unknown or invalid run id, a
run compared with itself, a run that ran no Spark jobs, a damaged run. Nothing is written
but the prediction record; no run is changed or lost.
"""
from __future__ import annotations

import logging
from typing import Any, Iterable

from ..analysis.compare import Comparison as _CoreComparison
from ..errors import JupyterPerfError, one_line
from ..model import Run
from ..store import RunStore, StoreError, default_store, valid_run_id

log = logging.getLogger("jupyter_perf")

#: How many other runs of the cell are read for the noise estimate (newest first).
NOISE_RUNS = 40


class CompareError(JupyterPerfError):
    """Two runs that cannot be compared, in one line with the next step. ``kind``: unknown |
    invalid | same | no-jobs | damaged | analysis | usage (the server's HTTP status)."""

    def __init__(self, message: str, kind: str = "usage"):
        super().__init__(message)
        self.kind = kind


class Comparison(_CoreComparison):
    """``analysis.compare.Comparison`` that shows itself in a notebook and remembers its
    summary (computed once)."""

    _summary: dict | None = None

    def summary(self) -> dict:
        if self._summary is None:
            self._summary = super().summary()
        return self._summary

    def html(self) -> str:
        """The standalone offline page (``jp.compare_html``)."""
        from ..render.compare import comparison_html
        return comparison_html(self.summary())

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        """The compare MIME payload (drawn by the extension's renderer), a short static
        ``text/html`` for viewers without it, and the sentence as text."""
        from ..constants import COMPARE_MIME_TYPE
        from ..render.compare import compare_payload, comparison_fallback
        s = self.summary()
        return {COMPARE_MIME_TYPE: compare_payload(s), "text/html": comparison_fallback(s),
                "text/plain": s["sentence"]}


# -- resolving runs --------------------------------------------------------------------------
def load_run(store: RunStore, run_id: str) -> Run:
    if not isinstance(run_id, str) or not valid_run_id(run_id):
        raise CompareError(f"{str(run_id)[:80]!r} is not a run id; list the runs with "
                           "`jupyter-perf runs` (or %perfmeasure list)", "invalid")
    try:
        return store.load(run_id)
    except KeyError:
        raise CompareError(f"no run {run_id} in the run store at {store.root}; list the runs "
                           "with `jupyter-perf runs` (or %perfmeasure list)", "unknown") from None
    except StoreError as exc:                    # damaged: the store's own line
        raise CompareError(one_line(exc, with_type=False), "damaged") from None


def resolve(obj: Any, store: RunStore) -> Run:
    """A Run from a Run, an Analysis or a run id of ``store``."""
    from ..analysis import Analysis

    if isinstance(obj, Run):
        return obj
    if isinstance(obj, Analysis):
        return obj.run
    if isinstance(obj, str):
        return load_run(store, obj.strip())
    raise CompareError(f"cannot compare a {type(obj).__name__}: give a Run, an Analysis or a "
                       "run id")


def _check(run: Run, side: str) -> None:
    if run.jobs.empty and run.tasks.empty:
        raise CompareError(f"run {run.run_id} ({side}) ran no Spark jobs (status "
                           f"{run.status or '?'}): there is nothing to compare; pick a run that "
                           "ran Spark work", "no-jobs")


def analysed(run: Run, side: str):
    from ..analysis import analyze

    try:
        return analyze(run)
    except Exception as exc:  # broad on purpose: a bug or odd data: one line, the run is kept
        raise CompareError(f"could not analyse run {run.run_id} ({side}): {one_line(exc)}; "
                           "its report (jupyter-perf report) shows what is there", "analysis") from exc


# -- noise from the store --------------------------------------------------------------------
def noise_groups(store: RunStore, a: Run, b: Run):
    """The band of the warm runs of A's code and settings in the store (B left out), and a
    line saying what it was learned from (``history.noise_for``: the one rule)."""
    from .history import noise_for
    return noise_for(store, a, b)


# -- the record of predictions ---------------------------------------------------------------
def record_predictions(store: RunStore, c: Comparison) -> int:
    """Append the comparison's predictions to the store's record; a failure is a note on
    the comparison (one line), never an error."""
    from ..store import accuracy

    s = c.summary()
    rows = accuracy.rows_of(s["a"], s["b"], s.get("predicted_vs_measured") or [],
                            a_wall_ms=s["wall_a_ms"], a_master=c.a.run.master,
                            b_master=c.b.run.master, title=s["a_title"])
    try:
        return accuracy.record(store.root, rows)
    except StoreError as exc:
        line = f"the prediction was not recorded: {one_line(exc, with_type=False)}"
        s["notes"].append(line)
        log.warning("%s", line)
        return 0


# -- the public API --------------------------------------------------------------------------
def compare(a: Any, b: Any, *, store: RunStore | None = None, record: bool = True,
            noise: Iterable | None = None) -> Comparison:
    """B against A: Runs, Analyses or run ids of the run store. ``noise``: a
    ``series.Noise``, or the wall times of warm repeats of A's code and settings, to use
    instead of the store's."""
    store = store or default_store()
    run_a, run_b = resolve(a, store), resolve(b, store)
    if run_a.run_id == run_b.run_id:
        raise CompareError(f"A and B are the same run ({run_a.run_id}): nothing can differ; "
                           "give two different runs (`jupyter-perf runs` lists them)", "same")
    _check(run_a, "A")
    _check(run_b, "B")
    analysis_a, analysis_b = analysed(run_a, "A"), analysed(run_b, "B")
    if noise is not None:
        groups, notes = noise, ["Noise: from the wall times given to compare()."]
    else:
        groups, notes = noise_groups(store, run_a, run_b)
    c = Comparison(analysis_a, analysis_b, groups, notes)
    if record:
        record_predictions(store, c)
    return c


def compare_html(c: Comparison | _CoreComparison) -> str:
    """The comparison as one standalone offline page: the renderer bundle inlined and the
    comparison's payload (no network)."""
    from ..render.compare import comparison_html
    return comparison_html(c.summary())


def export_comparison(c: Comparison | _CoreComparison, path: str, force: bool = False) -> str:
    """Write ``compare_html(c)`` to ``path`` as an export (``atomic.write_export``: never
    through a link, never over a file that is not an earlier export of the same pair)."""
    import os

    from ..atomic import write_export

    s = c.summary()
    return write_export(os.path.expanduser(path), compare_html(c), export_id(s["a"], s["b"]),
                        force=force)


def export_id(a: str, b: str) -> str:
    """The id an exported comparison's marker line carries."""
    return f"{a}_vs_{b}"
