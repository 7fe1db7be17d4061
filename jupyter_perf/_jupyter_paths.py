"""Where JupyterLab finds the prebuilt frontend of jupyter-perf.

The wheel installs the built extension under
``share/jupyter/labextensions/jupyter-perf`` (see pyproject.toml shared-data);
this hook serves ``jupyter labextension develop`` and tools that ask the
package directly. ``src`` is relative to the ``jupyter_perf`` package.
"""
from __future__ import annotations

LABEXTENSION_NAME = "jupyter-perf"


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextension", "dest": LABEXTENSION_NAME}]
