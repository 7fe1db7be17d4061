"""The Summary tab's data. (Being written: issue Q, the data payload.)"""
from __future__ import annotations

from ...analysis import Analysis
from ...model import Run


def data(a: Analysis, ctx) -> dict:
    s = ctx.summary
    return {"verdict": s["verdict"]}


def basic(run: Run) -> dict:
    return {}
