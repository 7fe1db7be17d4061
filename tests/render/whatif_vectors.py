"""Shared what-if test vectors: the settings both the node test and the browser test replay
in JavaScript and compare, exactly, with ``Analysis.whatif``."""
from __future__ import annotations

import itertools
import math

from jupyter_perf.render.payload import DISK_STOPS, SLOT_STOPS

INF = math.inf


def settings(full: bool = False) -> list[dict]:
    disks = DISK_STOPS if full else [1.0, 1.5, 3.0, INF]
    nets = DISK_STOPS if full else [1.0, 2.0, INF]
    slots = SLOT_STOPS if full else [0.5, 1.0, 1.5, 4.0]
    out = []
    for d, n, k, gc, st in itertools.product(disks, nets, slots, [True, False], [True, False]):
        out.append({"disk": d, "network": n, "slots": k, "gc": gc, "stragglers": st})
    return out


def expected(a, s: dict) -> float:
    return a.whatif(disk=s["disk"], network=s["network"], slots_factor=s["slots"],
                    gc=s["gc"], stragglers=s["stragglers"])


def label(f: float) -> str:
    return "∞" if math.isinf(f) else f"{f:g}×"
