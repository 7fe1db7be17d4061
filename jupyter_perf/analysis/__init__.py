"""Pure analysis of a :class:`~jupyter_perf.model.Run` — no Spark, Jupyter or Bokeh here.

    from jupyter_perf.analysis import analyze
    a = analyze(run)
    a.summary()                      # JSON-able dict (DESIGN.md schema)
    a.whatif(disk=float("inf"))      # predicted wall ms
    a.stragglers                     # DataFrame, one row per straggler / data-skewed task
    a.operators                      # DataFrame, SQL plan operators, most expensive first
    a.hints                          # advice with values: {operator, text, setting, value, ...}

Modules: ``timeline`` (intervals, stage groups, wall time, driver gaps), ``breakdown``
(per-task time components), ``replay`` (schedule simulation), ``whatif`` (scenario
durations), ``stragglers`` (progress rate, causes, data skew), ``resources`` (monotask model),
``verdict`` (one sentence + fix hints), ``operators`` (SQL plan ↔ stages ↔ task time),
``hints`` (advice with values), ``components`` (the breakdown's one definition),
``hostcpu`` (the host's CPU: floor and core wait), ``result`` (:class:`Analysis`).
"""
from __future__ import annotations

from .resources import ResourceParams
from .result import Analysis, analyze

__all__ = ["Analysis", "ResourceParams", "analyze"]
