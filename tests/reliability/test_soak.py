"""The soak (issue U5): one real kernel through many cells — measured and plain, groupBy,
join, sort, RDD, Python UDF and SQL queries, failing cells, interrupts — with every run's
stage aggregates equal to Spark's REST API, the kernel's memory, threads and open files
bounded, and ``<store>/logs`` pruned and cut. The driver and the bounds are in
``soakdriver.py``; CI runs :data:`soakdriver.CI_CELLS` cells (``JP_SOAK_CELLS`` overrides),
``benchmarks/soak.py`` the full profile. Figures: docs/reliability.md, "Soak"."""
from __future__ import annotations

import os

import pytest
import soakdriver

pytestmark = pytest.mark.own_process      # its own kernel, JVM and store: a process of its own


def test_soak(tmp_path_factory):
    cells = int(os.environ.get("JP_SOAK_CELLS", soakdriver.CI_CELLS))
    soak = soakdriver.run_soak(cells, home=str(tmp_path_factory.mktemp("jphome-soak")))
    figures = soakdriver.figures(soak)
    print("\n" + soakdriver.format_figures(figures))
    broken = soakdriver.problems(soak)
    assert not broken, "\n".join(broken[:40])
    # every kind of cell ran, each ended as it should (checked per cell in the driver)
    assert figures["cells"] == cells and len(soak.outcomes) == cells
    if cells >= len(soakdriver.PATTERN):
        assert set(figures["kinds"]) == {k.name for k in soakdriver.PATTERN}
        assert figures["interrupts"] >= 2 and figures["run_statuses"].get("interrupted")
        assert figures["run_statuses"].get("failed") and figures["run_statuses"].get("ok")
        assert figures["live_log_cut"]          # the running JVM's log passed its limit: cut
    # <store>/logs: the planted logs of finished JVMs were pruned when the kernel's JVM started
    assert figures["logs_before"][0] == soakdriver.PLANTED_LOGS
    assert figures["logs_after_start"][0] <= soakdriver.PLANTED_LOGS
