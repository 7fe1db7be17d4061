"""The live progress display under a running ``%%perfmeasure`` cell.

ipywidgets where a Jupyter front end can render them (one progress bar per
active stage, jobs, elapsed time, executors and cores, peak executor memory);
a plain-text display that is updated in place elsewhere. When the cell ends,
the same output is replaced by the report, so nothing is left polling.
"""
from __future__ import annotations

import html
import os
import threading
from typing import Any

from IPython.display import display

from .collect.progress import ProgressSnapshot
from .render import fmt

MAX_BARS = 8     # active stages shown as bars; the rest are summarised in one line


def text_of(snap: ProgressSnapshot) -> str:
    lines = [f"Spark: {snap.jobs_done}/{snap.jobs_started} jobs · {snap.elapsed_s:.0f} s · "
             f"{snap.executors} executor(s), {snap.cores} cores · peak executor memory "
             f"{fmt.nbytes(snap.peak_memory_bytes)}"]
    for s in snap.active_stages[:MAX_BARS]:
        width = 30
        filled = int(width * s.completed / s.num_tasks) if s.num_tasks else 0
        lines.append(f"  stage {s.stage_id} [{'#' * filled}{'.' * (width - filled)}] "
                     f"{s.completed}/{s.num_tasks} done, {s.active} running"
                     + (f", {s.failed} failed" if s.failed else "") + f"  {s.name[:60]}")
    hidden = len(snap.active_stages) - MAX_BARS
    if hidden > 0:
        lines.append(f"  … and {hidden} more active stages")
    return "\n".join(lines)


def mode_for(shell: Any) -> str:
    """'widget' in a Jupyter kernel, 'none' elsewhere; JUPYTER_PERF_PROGRESS=text|none forces
    the plain-text display (front ends without widgets) or none."""
    forced = os.environ.get("JUPYTER_PERF_PROGRESS", "").strip().lower()
    if forced in ("widget", "text", "none"):
        return forced
    if shell is None or type(shell).__name__ != "ZMQInteractiveShell":
        return "none"                      # a terminal: Spark work shows no cell to update
    return "widget"


class LiveDisplay:
    """``update(snapshot)`` from the poller thread; ``replace(bundle)`` when the cell ends.

    The display appears with the cell's first Spark job, not before: output the cell prints
    before its Spark work stays above the progress display, and so above the report that
    replaces it in place.
    """

    def __init__(self, mode: str):
        self.mode = mode
        self.updates = 0
        self._lock = threading.Lock()
        self._handle = None
        self._shown = False
        self._box = None
        self._bars: dict[int, Any] = {}

    def _show(self) -> None:
        self._shown = True
        if self.mode == "widget":
            import ipywidgets as w

            self._w = w
            self._header = w.HTML("Spark: starting…")
            self._box = w.VBox([self._header])
            self._handle = display(self._box, display_id=True)
        elif self.mode == "text":
            self._handle = display({"text/plain": "Spark: starting…"}, raw=True, display_id=True)

    def update(self, snap: ProgressSnapshot) -> None:
        with self._lock:
            if not self._shown:
                if not snap.jobs_started or snap.finished:
                    return
                self._show()
            self.updates += 1
            if self.mode == "widget":
                self._update_widgets(snap)
            elif self.mode == "text" and self._handle is not None:
                text = text_of(snap)
                self._handle.update({"text/plain": text,
                                     "text/html": f"<pre>{html.escape(text)}</pre>"}, raw=True)

    def _update_widgets(self, snap: ProgressSnapshot) -> None:
        w = self._w
        self._header.value = html.escape(text_of(snap).splitlines()[0])
        if snap.finished:   # what ran; a skipped stage (its output reused) never starts a task
            shown = [s for s in snap.stages if s.completed or s.failed][-MAX_BARS:]
        else:
            shown = snap.active_stages[:MAX_BARS]
        for s in shown:
            bar = self._bars.get(s.stage_id)
            if bar is None:
                bar = w.IntProgress(min=0, max=max(s.num_tasks, 1), bar_style="info",
                                    layout=w.Layout(width="60%"))
                label = w.Label()
                self._bars[s.stage_id] = (bar, label)
            bar, label = self._bars[s.stage_id]
            bar.max = max(s.num_tasks, 1)
            bar.value = s.completed
            bar.bar_style = "danger" if s.failed else ("success" if s.done else "info")
            label.value = (f"stage {s.stage_id}: {s.completed}/{s.num_tasks} done, {s.active} "
                           f"running{f', {s.failed} failed' if s.failed else ''} — {s.name[:80]}")
        rows = [w.HBox([self._bars[s.stage_id][0], self._bars[s.stage_id][1]]) for s in shown]
        self._box.children = [self._header, *rows]

    def state(self) -> dict[int, tuple[int, int]]:
        """Stage id -> (value, max) of each progress bar (for tests and debugging)."""
        return {k: (bar.value, bar.max) for k, (bar, _) in self._bars.items()}

    def replace(self, bundle: dict[str, str] | None, message: str = "") -> None:
        """Put the report (or a one-line message) where the progress display was."""
        with self._lock:
            if bundle is None and not message and not self._shown:
                return
            if bundle is None:
                bundle = {"text/plain": message}
            if self._handle is not None:
                self._handle.update(bundle, raw=True)
            else:
                if message and "text/html" not in bundle:
                    print(message)
                else:
                    display(bundle, raw=True)
            if self._box is not None:
                for bar, label in self._bars.values():
                    bar.close()
                    label.close()
                self._box.close()
                self._box = None
