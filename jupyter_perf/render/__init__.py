"""Render an Analysis (or a Run) as the report: data for the browser's one renderer, and
the standalone offline page it draws.

    from jupyter_perf import render
    html = render.report_html(analysis_or_run)     # one self-contained page
    render.export(analysis_or_run, "report.html")  # the same, written atomically
    render.inline.bundle(run, analysis)            # the notebook output (MIME bundle)

The names load on first use, so ``jupyter_perf.render.nbconvert`` (imported by every
nbconvert run) costs little when it has no report to embed.
"""
__all__ = ["export", "report_html"]


def __getattr__(name: str):
    if name in __all__:
        from . import report
        return getattr(report, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
