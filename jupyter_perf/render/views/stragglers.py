"""The stragglers tab's data. (Being written: issue Q, the data payload.)"""
from __future__ import annotations

from ...analysis import Analysis


def data(a: Analysis, ctx) -> dict:
    return {}
