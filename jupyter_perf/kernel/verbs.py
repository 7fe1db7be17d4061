"""The magic's verbs on stored runs: ``%perfmeasure compare [A] [B]``, ``%perfmeasure advice
RUN_ID [N]``, and the comparison under a ``%%perfmeasure --advised-by RUN_ID`` cell."""
from __future__ import annotations

from typing import Any

from ..model import Run
from ..render.advice import ready_cell
from ..service.comparing import NOISE_RUNS, CompareError, analysed, compare, load_run
from ..store import RunStore, StoreError, default_store


def latest_pair(store: RunStore | None = None, a: Any = None) -> tuple[Any, Run]:
    """(A, B) for ``%perfmeasure compare`` without two ids: B is this kernel's latest run, A
    the given run, else the latest earlier run of B's cell that ran Spark jobs."""
    from ..store import rundir
    from .measuring import last_run

    store = store or default_store()
    b = last_run()
    if b is None:
        raise CompareError("no run in this kernel yet: run a %%perfmeasure cell (then run it "
                           "again, changed or not), or give two run ids")
    if a is not None:
        return a, b
    try:
        if store.get(b.run_id) is not None:
            rows = store.previous_runs(b.run_id, limit=NOISE_RUNS)
        else:
            rows = store.cell_runs(cell_id=rundir.cell_id(b.extra), source=b.source,
                                   notebook=b.notebook, exclude=b.run_id, limit=NOISE_RUNS)
    except (StoreError, KeyError):
        rows = []
    earlier = [r for r in rows if (r.get("num_jobs") or 0) > 0]
    if not earlier:
        raise CompareError(f"no earlier run of the cell of run {b.run_id} in the store: run the "
                           "cell again (changed or not), then %perfmeasure compare")
    return earlier[0]["run_id"], b



def _say(line: str) -> None:
    import sys
    print(f"perfmeasure: {line}", file=sys.stderr)


def magic_verb(shell: Any, rest: list[str]) -> None:
    """``%perfmeasure compare [A] [B]`` and ``%perfmeasure advice RUN_ID [N]``: the comparison
    or the hints shown under the cell; every problem one line."""
    from IPython.display import display

    verb, ids = rest[0], [x for x in rest[1:] if x]
    try:
        if verb == "history":
            _history(" ".join(ids) if ids else None)
            return
        if verb == "regressions":
            _regressions(shell, ids)
            return
        if verb == "compare":
            if len(ids) == 2:
                c = compare(ids[0], ids[1])
            else:
                a, b = latest_pair(a=ids[0] if ids else None)
                c = compare(a, b)
            display(c)
        elif len(ids) in (1, 2):
            _advice(shell, ids[0], ids[1] if len(ids) == 2 else None)
        else:
            _say("usage: %perfmeasure advice RUN_ID [N]")
    except CompareError as exc:
        _say(str(exc))


def _history(what: str | None) -> None:
    """``%perfmeasure history [CELL]``: the series of a cell (a run id, label or cell id; none:
    this kernel's latest run's cell), printed as ``jupyter-perf history`` prints it."""
    from ..service.history import HistoryError, history, history_text
    from .measuring import last_run

    target: Any = what
    if target is None:
        target = last_run()
        if target is None:
            _say("no run in this kernel yet: run a %%perfmeasure cell, or give a run id, "
                 "label or cell id")
            return
    try:
        print(history_text(history(target)))
    except HistoryError as exc:
        _say(str(exc))


def _regressions(shell: Any, words: list[str]) -> None:
    """``%perfmeasure regressions [all | kernel | NOTEBOOK]``: the cells whose latest warm run
    regressed, printed as ``jupyter-perf regressions`` prints them. None: this notebook's cells
    when the kernel knows its notebook, else every stored run; ``kernel``: the runs of this
    kernel's Spark application (its latest run's)."""
    import os

    from ..service.history import HistoryError, regressions, regressions_text
    from .measuring import last_run

    what = " ".join(words)
    notebook, app_id = None, None
    if what == "kernel":
        run = last_run()
        if run is None or not run.app_id:
            _say("no run with a Spark application in this kernel yet: run a %%perfmeasure "
                 "cell, or use %perfmeasure regressions all")
            return
        app_id = run.app_id
    elif what and what != "all":
        notebook = what
    elif not what:
        ns = getattr(shell, "user_ns", None) or {}
        notebook = str(ns.get("__session__") or os.environ.get("JPY_SESSION_NAME", "")) or None
    try:
        print(regressions_text(regressions(notebook=notebook, app_id=app_id)))
    except HistoryError as exc:
        _say(str(exc))


def _advice(shell: Any, run_id: str, number: str | None) -> None:

    store = default_store()
    run = load_run(store, run_id)
    hints = [h for h in analysed(run, "advised").hints if ready_cell(run, h)]
    if not hints:
        print(f"Run {run_id} has no hint with a setting to try"
              + ("" if run.kind == "cell" else " (only a notebook cell's run can be re-run)")
              + ".")
        return
    if number is None:
        for i, h in enumerate(hints, 1):
            print(f"{i}. {h.get('setting')}={h.get('value')}: {h.get('text')}")
        print(f"%perfmeasure advice {run_id} N puts hint N's setting into a ready cell below.")
        return
    if not number.isdigit() or not 1 <= int(number) <= len(hints):
        raise CompareError(f"no hint {number!r} of run {run_id}: it has {len(hints)} "
                           f"(1–{len(hints)}); %perfmeasure advice {run_id} lists them")
    cell = ready_cell(run, hints[int(number) - 1])
    shell.set_next_input(cell, replace=False)
    print("The ready cell is below: run it, and it is compared with run "
          f"{run_id} when it ends.")


def show_advised(advised_id: str, run: Run) -> None:
    """Under a ``%%perfmeasure --advised-by RUN_ID`` cell: its run against the advised run,
    saying whether the advice helped."""
    from IPython.display import display

    try:
        c = compare(advised_id, run)
    except CompareError as exc:
        _say(f"could not compare with the advised run: {exc}")
        return
    s = c.summary()
    if s.get("advice") is None:
        s["advice"] = {"verdict": "not_applied", "followed": [],
                       "words": f"this run applied none of the settings run {advised_id} "
                                "advised (with the value it advised), so this compares the "
                                "runs without saying whether the advice helped"}
    display(c)
