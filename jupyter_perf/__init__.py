"""jupyter-perf: a Jupyter-native profiler for Apache Spark.

    import jupyter_perf as jp
    spark = jp.spark_session()
    run = jp.measure(lambda: df.collect())
    run = jp.last_run()
    a = jp.analyze(run); a.summary(); a.whatif(disk=float("inf")); a.stragglers
    html = jp.report_html(a)
    c = jp.compare(run_a, run_b); c.summary(); html = jp.compare_html(c)
"""
from __future__ import annotations

from typing import Any, Callable

# jupyter_server and JupyterLab look these two up on the package itself.
from ._jupyter_paths import _jupyter_labextension_paths  # noqa: F401 -- looked up by JupyterLab
from ._version import __version__
from .model import Run
from .server import _jupyter_server_extension_points  # noqa: F401 -- looked up by jupyter_server


def spark_session(*args, **kwargs):
    """The embedded default SparkSession (``local[*]``, sparkmeasure attached), or with
    ``remote="local[N]" | "sc://host:port"`` (and ``ui_url=``) a Spark Connect session."""
    from .collect.session import spark_session as _spark_session
    return _spark_session(*args, **kwargs)


def measure(fn: Callable[[], Any], spark=None, label: str = "", store: bool = True,
            ui_url: str | None = None, profile: bool = False) -> Run:
    """Run ``fn()`` under measurement and return its Run (what ``%%perfmeasure`` does).
    ``spark``: the session (default: the embedded one); ``ui_url``: a Spark Connect server's
    Spark UI; ``profile``: also sample the window's CPU stacks (``a.hot_functions``, the
    Profile tab). If ``fn`` raises, its exception is re-raised unchanged."""
    from .kernel.measuring import measure as _measure
    return _measure(fn, spark=spark, label=label, store=store, ui_url=ui_url, profile=profile)


def last_run() -> Run | None:
    """The newest Run measured in this kernel (``%%perfmeasure -o NAME`` also binds it)."""
    from .kernel.measuring import last_run as _last_run
    return _last_run()


def always_on(enabled: bool = True) -> None:
    """Measure every cell that runs Spark jobs (``%perfmeasure on``), or stop (``False``)."""
    from IPython import get_ipython

    from .kernel.always_on import always_on_for
    shell = get_ipython()
    if shell is None:
        raise RuntimeError("always_on() needs an IPython kernel (a notebook)")
    always_on_for(shell).enable(enabled)


def analyze(run, **options):
    """Why the run took the time it took: breakdown, replay, what-if, stragglers, verdict."""
    from .analysis import analyze as _analyze
    return _analyze(run, **options)


def report_html(obj) -> str:
    """A standalone HTML report (no network needed to view it) of a Run or Analysis."""
    from .render import report_html as _report_html
    return _report_html(obj)


def compare(a, b, **options):
    """B against A (Runs, Analyses or run ids of the run store) -> Comparison: the wall-time
    change split into parts that add up, settings, operators and stages matched by shape,
    noise from the store's repeats of the cell, predicted vs measured (``service/comparing.py``)."""
    from .service.comparing import compare as _compare
    return _compare(a, b, **options)


def history(cell_or_label_or_run, **options):
    """Every stored run of one cell as a DataFrame, oldest first (same JupyterLab cell id,
    else label, else source): wall time and its components, code and settings fingerprints,
    warm or cold, the band each run was expected in, regression / improvement by the one noise
    rule, and what moved (``service/history.py``, ``analysis/series.py``)."""
    from .service.history import history as _history
    return _history(cell_or_label_or_run, **options)


def regressions(notebook=None, **options):
    """The cells that regressed, as a DataFrame: one row per cell whose latest warm run the one
    noise rule flags (its run id, measured wall time, expected band, what moved);
    ``notebook=PATH`` or ``app_id=ID`` (a kernel's Spark application) narrows it
    (``service/history.py``)."""
    from .service.history import regressions as _regressions
    return _regressions(notebook=notebook, **options)


def compare_html(comparison) -> str:
    """A comparison as one standalone HTML document (no script, no network needed)."""
    from .service.comparing import compare_html as _compare_html
    return _compare_html(comparison)


def load_eventlog(path):
    """A whole past application from its Spark event log (file, rolled dir, compressed) -> Run."""
    from .collect.eventlog import load_eventlog as _load_eventlog
    return _load_eventlog(path)


def load_rest(url, app_id, attempt=None, **limits):
    """A whole application from a Spark History Server or live UI at ``url`` -> Run.

    ``limits``: ``timeout`` (per read), ``deadline`` (per request), ``collection_deadline``
    (whole load), in seconds; see ``jupyter_perf.collect.history.load_rest``."""
    from .collect.history import load_rest as _load_rest
    return _load_rest(url, app_id, attempt, **limits)


def load_ipython_extension(ipython) -> None:
    from .kernel.magic import load_ipython_extension as _load
    _load(ipython)


__all__ = ["Run", "__version__", "always_on", "analyze", "compare", "compare_html", "history", "last_run",
           "load_eventlog", "load_ipython_extension", "load_rest", "measure", "regressions", "report_html",
           "spark_session"]
