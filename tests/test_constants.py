"""The facts Python and TypeScript share are typed once: labextension/src/constants.json.

``jupyter_perf.constants`` reads that file (the wheel ships it as jupyter_perf/constants.json);
the TypeScript imports it (labextension/src/__tests__/constants.spec.ts checks that side).
Here: Python's values are the file's, the wheel gets the file, and no module of either
language types one of the values again.
"""
from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

import pytest

from jupyter_perf import constants

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO / "labextension" / "src" / "constants.json"

#: The string facts, as their exact values must never be typed again.
STRING_KEYS = ("report_mime_type", "compare_mime_type", "item_encoding", "bokeh_namespace",
               "api_namespace")

pytestmark = pytest.mark.skipif(not SHARED.is_file(), reason="not a source checkout")


def shared() -> dict:
    return json.loads(SHARED.read_text(encoding="utf-8"))


def test_python_reads_the_one_file():
    assert constants.CANDIDATES[1] == SHARED
    values = shared()
    assert constants.REPORT_MIME_TYPE == values["report_mime_type"]
    assert constants.REPORT_FORMAT == values["report_format"]
    assert constants.COMPARE_MIME_TYPE == values["compare_mime_type"]
    assert constants.COMPARE_FORMAT == values["compare_format"]
    assert constants.ITEM_ENCODING == values["item_encoding"]
    assert constants.BOKEH_NAMESPACE == values["bokeh_namespace"]
    assert list(constants.BOKEH_BUNDLES) == values["bokeh_bundles"]
    assert constants.API_NAMESPACE == values["api_namespace"]


def test_the_modules_that_used_to_type_them_use_them():
    from jupyter_perf.render import inline, nbconvert, views

    assert inline.MIME is constants.REPORT_MIME_TYPE
    assert inline.ITEM_ENCODING is constants.ITEM_ENCODING          # format 1, still read
    assert nbconvert.REPORT_FORMAT is constants.REPORT_FORMAT
    assert views.DATA_FORMAT == constants.REPORT_DATA_FORMAT
    payload = views.mime_payload({"format": views.DATA_FORMAT, "run_id": "r",
                                  "header": {"title": "t"}, "tabs": {}, "tasks": {},
                                  "tasks_meta": {}})
    assert payload["encoding"] is constants.REPORT_DATA_ENCODING


def test_the_wheel_ships_the_file():
    if sys.version_info < (3, 11):
        pytest.skip("tomllib is Python 3.11+")
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    wheel = config["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["force-include"]["labextension/src/constants.json"] == \
        "jupyter_perf/constants.json"
    assert constants.CANDIDATES[0].relative_to(REPO) == Path("jupyter_perf/constants.json")


def test_typescript_compiles_the_file():
    tsconfig = json.loads((REPO / "tsconfig.json").read_text())
    assert "labextension/src/constants.json" in tsconfig["include"]
    for module in ("reportpayload.ts", "request.ts"):
        source = (REPO / "labextension" / "src" / module).read_text()
        assert "import constants from './constants.json';" in source


def _python_literals(path: Path) -> set[str]:
    return {node.value for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)}


def _typescript_literals(path: Path) -> set[str]:
    text = re.sub(r"/\*.*?\*/", "", path.read_text(encoding="utf-8"), flags=re.S)
    text = re.sub(r"(?m)^\s*//.*$", "", text)
    return {m.group(2) for m in re.finditer(r"(['\"`])((?:(?!\1).)*)\1", text)}


def test_no_module_types_a_shared_value_again():
    values = {shared()[key] for key in STRING_KEYS}
    sources = [*sorted((REPO / "jupyter_perf").rglob("*.py")),
               *sorted((REPO / "labextension" / "src").glob("*.ts"))]
    found = []
    for path in sources:
        literals = (_python_literals(path) if path.suffix == ".py"
                    else _typescript_literals(path))
        found += [f"{path.relative_to(REPO)}: {v!r}" for v in sorted(values & literals)]
    assert found == [], "use jupyter_perf.constants / constants.json instead:\n" + "\n".join(found)


def test_the_scan_sees_a_typed_value(tmp_path):
    """The scan above fails when it should: a planted literal in each language is found."""
    py = tmp_path / "m.py"
    py.write_text('"""Docs may say application/vnd.jupyter-perf.report+json."""\n'
                  'MIME = "application/vnd.jupyter-perf.report+json"\n')
    ts = tmp_path / "m.ts"
    ts.write_text("/** `jupyter-perf/api` in a comment is fine */\n"
                  "export const API = 'jupyter-perf/api';\n")
    assert "application/vnd.jupyter-perf.report+json" in _python_literals(py)
    assert "jupyter-perf/api" in _typescript_literals(ts)
    ts.write_text("/** `jupyter-perf/api` in a comment is fine */\nexport const X = 1;\n")
    assert "jupyter-perf/api" not in _typescript_literals(ts)
