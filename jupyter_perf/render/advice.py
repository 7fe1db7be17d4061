"""Advice → re-run (issue J): a hint's setting as a ready cell, and the marker that links the
re-run to the advised run.

    %%perfmeasure --advised-by 20261122-015800-3f9a1c
    # jupyter-perf advice of run 20261122-015800-3f9a1c: spark.sql.shuffle.partitions=8
    spark.conf.set('spark.sql.shuffle.partitions', '8')
    <the cell as it ran>

``--advised-by RUN_ID`` is the marker: when that cell has run, the magic compares it with the
advised run and says whether the advice helped (within or beyond noise, predicted vs
measured). Settings a running session cannot change (``spark.executor.memory``, …) get a
comment saying to restart the session with them instead of a ``spark.conf.set`` that Spark
would refuse. A hint may propose several settings at once (``hint["settings"]``): the cell
sets them all.

The cell uses the names the user gave (``names``: ``{"module": "jp", "spark": "session"}``,
which the kernel finds in the user's namespace: the name bound to the ``jupyter_perf`` module
and the one bound to the SparkSession); without them ``spark`` and a self-contained
``import jupyter_perf``. The report's Summary shows the cell under each hint with a Copy button;
``%perfmeasure advice RUN_ID N`` puts it into a new cell below.
"""
from __future__ import annotations

import html
import re
import shlex
from typing import Any

from ..model import cell_body

MARKER_OPTION = "--advised-by"

#: Copies the <pre> beside the button: the clipboard API where the page may use it, else
#: a selection and the copy command, else the text left selected for Ctrl+C.
_COPY_JS = (
    "const p=this.parentNode.querySelector('pre'),b=this;"
    "const done=()=>{b.textContent='Copied'};"
    "const sel=()=>{const r=document.createRange();r.selectNodeContents(p);"
    "const s=window.getSelection();s.removeAllRanges();s.addRange(r);"
    "try{if(document.execCommand('copy')){done();return}}catch(e){}"
    "b.textContent='Selected: press Ctrl+C'};"
    "if(navigator.clipboard&&navigator.clipboard.writeText){"
    "navigator.clipboard.writeText(p.textContent).then(done,sel)}else{sel()}")


def runtime_setting(setting: str) -> bool:
    """Whether ``spark.conf.set`` can change ``setting`` in a running session (SQL settings)."""
    return setting.startswith("spark.sql.")


def _own_set(setting: str) -> re.Pattern[str]:
    """``spark.conf.set("<setting>", <value>)`` as a cell may write it (one line)."""
    return re.compile(r"(spark\.conf\.set\(\s*(['\"])" + re.escape(setting)
                      + r"\2\s*,\s*)[^)\n]*\)")


IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")


def _name(names: dict | None, key: str) -> str | None:
    value = (names or {}).get(key)
    return value if isinstance(value, str) and IDENTIFIER.match(value) else None


def hint_settings(hint: dict) -> list[tuple[str, str]]:
    """Every ``(setting, value)`` a hint proposes (its ``settings``, else its ``setting``)."""
    pairs = [(str(k), str(v)) for k, v in (hint.get("settings") or []) if k and v is not None]
    if not pairs and hint.get("setting") and hint.get("value") is not None:
        pairs = [(str(hint["setting"]), str(hint["value"]))]
    return pairs


def ready_cell(run: Any, hint: Any, names: dict | None = None) -> str | None:
    """The cell that re-runs ``run``'s cell with ``hint``'s settings, marked with the advised
    run's id; None when the hint has no setting or the run no cell. ``names``: the user's
    names for the ``jupyter_perf`` module (``"module"``) and the session (``"spark"``); by
    default the names the kernel recorded with the run (``run.extra["names"]``)."""
    if not isinstance(hint, dict):
        return None
    if names is None:
        names = (getattr(run, "extra", None) or {}).get("names")
    pairs = hint_settings(hint)
    body = cell_body(getattr(run, "source", "") or "")
    if not pairs or not body.strip() or getattr(run, "kind", "") != "cell":
        return None
    spark = _name(names, "spark") or "spark"
    module = _name(names, "module")
    header = f"%%perfmeasure {MARKER_OPTION} {run.run_id}"
    if getattr(run, "label", ""):
        header += f" --label {shlex.quote(str(run.label))}"
    advice = ", ".join(f"{k}={v}" for k, v in pairs)
    lines = [header, f"# jupyter-perf advice of run {run.run_id}: {advice}"]
    at_start = []
    for setting, value in pairs:
        own = _own_set(setting)
        if runtime_setting(setting) and own.search(body):
            # the cell sets it itself: change its value there (a line before would be undone)
            body = own.sub(lambda m, v=value: f"{m.group(1)}{v!r})", body)
            if len(pairs) == 1:
                lines[-1] += " (changed where the cell sets it)"
            else:
                lines.append(f"# {setting}: changed where the cell sets it")
        elif runtime_setting(setting):
            lines.append(f"{spark}.conf.set({setting!r}, {value!r})")
        else:
            at_start.append((setting, value))
    if at_start:
        conf = ", ".join(f"{k!r}: {v!r}" for k, v in at_start)
        keys = ", ".join(k for k, _ in at_start)
        lines.append(f"# {keys} {'is' if len(at_start) == 1 else 'are'} read when Spark starts: "
                     "restart the session with "
                     f"{'it' if len(at_start) == 1 else 'them'}, e.g.")
        if module is None:
            lines.append("#   import jupyter_perf")
        lines.append(f"#   {spark}.stop(); {spark} = {module or 'jupyter_perf'}"
                     f".spark_session(**{{{conf}}})")
    return "\n".join(lines + [body])


def ready_cell_html(run: Any, hint: Any, names: dict | None = None) -> str:
    """The ready cell under a hint in the report: collapsed, escaped, with a Copy button."""
    cell = ready_cell(run, hint, names)
    if cell is None:
        return ""
    return ("<details class='jp-ready-cell'><summary>Re-run with this setting: a ready "
            "cell</summary><pre>" + html.escape(cell) + "</pre><button type='button' "
            "class='jp-ready-cell-copy' onclick=\"" + html.escape(_COPY_JS, quote=True)
            + "\">Copy cell</button> <span class='muted'>paste it into a new cell and run it: "
            "the re-run is compared with this run automatically</span></details>")
