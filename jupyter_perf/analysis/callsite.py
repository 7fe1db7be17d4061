"""Spark call sites shown as the cell line they point to.

Spark names every job and stage by its *call site*, the first frame outside Spark that called
the action: ``collect at /tmp/ipykernel_4242/2750918563.py:11``. In a notebook that file is
the kernel's copy of the cell (ipykernel caches each cell it compiles as
``<tmp>/ipykernel_<pid>/<hash>.py``; plain IPython names it ``<ipython-input-N-hash>``), so
the line is a line of the cell — numbered as the editor numbers it: under ``%%perfmeasure``
the magic's header is line 1 (``jupyter_perf/kernel/magic.py`` compiles the body from line 2),
in an always-on cell (``run.extra["always_on"]``) the cell's first line is line 1.

A call site maps to the measured cell only when it points into *that* cell: the kernel's
file name for it (``run.extra["cell_file"]``) when the kernel recorded it, else a cell file
of the kernel whose line calls the action the call site names (an action called from a
function defined in an earlier cell points into that cell's file, and its line number means
nothing here).
"""
from __future__ import annotations

import re
from typing import Any

CALL_SITE = re.compile(r"^(?P<fn>[\w.<>$]+) at (?P<file>.+?):(?P<line>\d+)\s*$")
CELL_FILE = re.compile(r"(ipykernel_\d+[/\\]-?\d+\.py|<ipython-input-\d+-[0-9a-f]+>)")
MAX_TEXT = 80


def _first_line(run: Any) -> int:
    """The editor's number of ``run.source``'s first line."""
    source = getattr(run, "source", "") or ""
    if source.lstrip().startswith("%%") or (getattr(run, "extra", None) or {}).get("always_on"):
        return 1
    return 2


def map_call_site(call_site: Any, source: str, cell_file: str | None = None,
                  first_line: int = 2) -> dict | None:
    """``{"line", "text", "fn", "label"}`` for a call site that points into the cell whose
    body is ``source`` (its first line numbered ``first_line``), else None.

    ``label`` is what a table shows for the call site: "collect at cell line 11"."""
    for part in str(call_site or "").splitlines():
        m = CALL_SITE.match(part.strip())
        if not m:
            continue
        file, number = m.group("file"), int(m.group("line"))
        if cell_file:
            if file != cell_file:
                continue
        elif not CELL_FILE.search(file):
            continue
        lines = (source or "").splitlines()
        index = number - first_line
        if not 0 <= index < len(lines):
            continue
        fn = m.group("fn").rsplit(".", 1)[-1]
        text = lines[index].strip()
        if not cell_file and fn not in text:
            continue
        if len(text) > MAX_TEXT:
            text = text[:MAX_TEXT - 1] + "…"
        return {"line": number, "text": text, "fn": fn,
                "label": f"{fn} at cell line {number}"}
    return None


def run_call_site(run: Any, call_site: Any) -> dict | None:
    """:func:`map_call_site` for one of ``run``'s call sites (None for runs without a cell)."""
    if getattr(run, "kind", "") != "cell" or not getattr(run, "source", ""):
        return None
    extra = getattr(run, "extra", None) or {}
    return map_call_site(call_site, run.source, extra.get("cell_file") or None, _first_line(run))


def cell_line_label(run: Any, call_site: Any) -> str | None:
    """"collect at cell line 11" for a call site into the run's cell, else None."""
    mapped = run_call_site(run, call_site)
    return mapped["label"] if mapped else None


def call_site_shown(run: Any, call_site: Any) -> tuple[str, str]:
    """What a table shows for a stage's or job's call site, and its hover text: "collect at
    cell line 11" with the line's text when it points into the run's cell, else Spark's own
    name and no hover text (a missing name: empty)."""
    if not isinstance(call_site, str):
        return "", ""
    mapped = run_call_site(run, call_site)
    return (mapped["label"], mapped["text"]) if mapped else (call_site, "")


__all__ = ["map_call_site", "run_call_site", "cell_line_label", "call_site_shown"]
