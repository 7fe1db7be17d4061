"""The live progress display under a running ``%%perfmeasure`` cell.

One output, updated in place through its display id (``update_display_data``): one bar per
active stage, jobs, elapsed time, executors and cores, the executor heap peak this cell
reached, as HTML with a
plain-text twin for front ends that show only text. When the cell ends, the same output is
replaced by the report, so nothing is left polling.

Why not ipywidgets: a widget is a comm. JupyterLab (4.4+) opens a kernel subshell for comms
through the control channel, and the kernel's busy/idle answer to that request turns the
notebook's kernel status to "idle" while the cell still runs; every widget left in the kernel
is also restored, viewless, by each browser reload. Display updates carry no comm, need no
front-end extension, and leave nothing behind in the kernel or the notebook.
"""
from __future__ import annotations

import html
import os
import threading
from typing import Any

from IPython.display import DisplayHandle, display

from .. import fmt
from ..collect.progress import ProgressSnapshot, StageProgress

MAX_BARS = 8     # stages shown as bars; the rest are summarised in one line
TEXT_WIDTH = 30  # characters of a text bar

# JupyterLab theme colours, with fallbacks for other front ends
_COLOURS = {"running": "var(--jp-brand-color1, #1976d2)",
            "done": "var(--jp-success-color1, #388e3c)",
            "failed": "var(--jp-error-color1, #d32f2f)"}


def shown_stages(snap: ProgressSnapshot) -> list[StageProgress]:
    """The stages a display shows: the active ones while the cell runs, what ran at the end
    (a skipped stage, its output reused, never starts a task)."""
    if snap.finished:
        return [s for s in snap.stages if s.completed or s.failed][-MAX_BARS:]
    return snap.active_stages[:MAX_BARS]


def _hidden(snap: ProgressSnapshot) -> int:
    return 0 if snap.finished else max(len(snap.active_stages) - MAX_BARS, 0)


def header_of(snap: ProgressSnapshot) -> str:
    own = getattr(snap, "header", None)    # Spark Connect's client-side view says its own
    if callable(own):
        return own()
    return (f"Spark: {snap.jobs_done}/{snap.jobs_started} jobs · {snap.elapsed_s:.0f} s · "
            f"{snap.executors} executor(s), {snap.cores} cores · "
            + (f"executor heap peak this cell {fmt.nbytes(snap.peak_memory_bytes)}"
               if snap.peak_memory_bytes else "no new executor heap peak this cell"))


def stage_line(s: StageProgress) -> str:
    running = "" if s.active is None else f", {s.active} running"   # None: not known per stage
    return (f"stage {s.stage_id}: {s.completed}/{s.num_tasks} done{running}"
            + (f", {s.failed} failed" if s.failed else "") + f" — {s.name[:80]}")


def _state(s: StageProgress) -> str:
    return "failed" if s.failed else ("done" if s.done else "running")


def text_of(snap: ProgressSnapshot) -> str:
    lines = [header_of(snap)]
    for s in shown_stages(snap):
        filled = int(TEXT_WIDTH * s.completed / s.num_tasks) if s.num_tasks else 0
        lines.append(f"  [{'#' * filled}{'.' * (TEXT_WIDTH - filled)}] {stage_line(s)}")
    if _hidden(snap):
        lines.append(f"  … and {_hidden(snap)} more active stages")
    return "\n".join(lines)


def html_of(snap: ProgressSnapshot) -> str:
    """The display as HTML; every Spark-provided string (stage names) is escaped."""
    rows = [f'<div class="jupyter-perf-progress-header">{html.escape(header_of(snap))}</div>']
    for s in shown_stages(snap):
        share = min(100.0, 100.0 * s.completed / s.num_tasks) if s.num_tasks else 0.0
        state = _state(s)
        rows.append(
            f'<div class="jupyter-perf-progress-stage" data-stage="{s.stage_id}" '
            f'data-state="{state}" style="display:flex;align-items:center;gap:8px;margin:2px 0">'
            '<div role="progressbar" aria-valuemin="0" '
            f'aria-valuemax="{max(s.num_tasks, 1)}" aria-valuenow="{s.completed}" '
            'style="flex:0 0 40%;height:10px;border-radius:2px;'
            'background:var(--jp-layout-color3, #ddd)">'
            f'<div style="width:{share:.1f}%;height:100%;border-radius:2px;'
            f'background:{_COLOURS[state]}"></div></div>'
            f'<span class="jupyter-perf-progress-label">{html.escape(stage_line(s))}</span></div>')
    if _hidden(snap):
        rows.append(f"<div>… and {_hidden(snap)} more active stages</div>")
    return ('<div class="jupyter-perf-progress" style="font-size:var(--jp-ui-font-size1, 13px);'
            'color:var(--jp-ui-font-color1, inherit)">' + "".join(rows) + "</div>")


def mode_for(shell: Any) -> str:
    """'html' in a Jupyter kernel, 'none' elsewhere; JUPYTER_PERF_PROGRESS=html|text|none
    forces the display (text: plain text only)."""
    forced = os.environ.get("JUPYTER_PERF_PROGRESS", "").strip().lower()
    if forced in ("html", "text", "none"):
        return forced
    if shell is None or type(shell).__name__ != "ZMQInteractiveShell":
        return "none"                      # a terminal: Spark work shows no cell to update
    return "html"


class LiveDisplay:
    """``update(snapshot)`` from the poller thread; ``replace(bundle)`` when the cell ends.

    The display appears with the cell's first Spark job, not before: output the cell prints
    before its Spark work stays above the progress display, and so above the report that
    replaces it in place.
    """

    def __init__(self, mode: str):
        self.mode = mode
        self.updates = 0
        self.last: ProgressSnapshot | None = None
        self._lock = threading.Lock()
        self._handle = None
        self._shown = False
        self._frozen = False     # "collecting…" shown: the poller's last views are ignored

    def _bundle(self, snap: ProgressSnapshot) -> dict[str, str]:
        text = text_of(snap)
        rich = html_of(snap) if self.mode == "html" else f"<pre>{html.escape(text)}</pre>"
        return {"text/plain": text, "text/html": rich}

    def update(self, snap: ProgressSnapshot) -> None:
        with self._lock:
            if self._frozen:
                return
            if not self._shown:
                if not snap.jobs_started or snap.finished:
                    return
                self._shown = True
                self._handle = DisplayHandle()     # (displays nothing outside IPython)
                self._handle.display(self._bundle(snap), raw=True)
            else:
                self._handle.update(self._bundle(snap), raw=True)
            self.updates += 1
            self.last = snap

    def state(self) -> dict[int, tuple[int, int]]:
        """Stage id -> (completed, tasks) of each bar shown last (for tests and debugging)."""
        if self.last is None:
            return {}
        return {s.stage_id: (s.completed, s.num_tasks) for s in shown_stages(self.last)}

    def collecting(self, bundle: dict[str, str]) -> None:
        """The cell ended and its run is being collected after it: ``bundle`` (one line) in
        place of the progress display, or as a new output with a display id; the progress
        display stops updating. Called on the kernel's main thread while the cell still runs,
        so a new output lands under the cell."""
        with self._lock:
            self._frozen = True
            if self._handle is None:
                self._handle = DisplayHandle()
                self._handle.display(bundle, raw=True)
            else:
                self._handle.update(bundle, raw=True)
            self._shown = True

    def replace(self, bundle: dict[str, str] | None, message: str = "") -> None:
        """Put the report (or a one-line message) where the progress display was."""
        with self._lock:
            if bundle is None and not message and not self._shown:
                return
            if bundle is None:
                bundle = {"text/plain": message}
            if self._handle is not None:
                self._handle.update(bundle, raw=True)
            elif message and "text/html" not in bundle:
                print(message)
            else:
                display(bundle, raw=True)
