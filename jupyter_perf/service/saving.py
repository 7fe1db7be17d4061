"""Keep a run: analyse it and store it, and never lose it on the way (every front door —
the kernel's magics and ``measure()``, the CLI — stores runs through here)."""
from __future__ import annotations

import logging
from typing import Any

from ..errors import one_line
from ..model import Run

log = logging.getLogger("jupyter_perf")


def save(run: Run, summary: dict[str, Any] | None = None) -> str | None:
    """Store ``run`` durably; on any failure keep going: the reason becomes the run's last
    warning (one line) and None is returned. Storing never changes what the caller's own code
    returned or raised."""
    from ..store import default_store
    try:
        return default_store().save(run, summary=summary if summary is not None
                                    else summary_or_none(run))
    except Exception as exc:   # StoreError, or a store that is damaged in a way it cannot say
        problem = f"run {run.run_id} was not stored: {one_line(exc)}"
        run.warnings.append(problem)
        log.warning("%s", problem)
        return None


def analysis_or_none(run: Run):
    """(Analysis, summary) of ``run``, or (None, None) if the analysis fails: never lose a run."""
    from ..analysis import analyze

    try:
        analysis = analyze(run)
        return analysis, analysis.summary()
    except Exception as exc:
        run.warnings.append(f"analysis failed: {one_line(exc)}")
        return None, None


def summary_or_none(run: Run) -> dict[str, Any] | None:
    return analysis_or_none(run)[1]
