"""The server extension's one route table (server/__init__.py ``routes``), and its layout rule:
the modules below ``server/__init__.py`` never import it (the handlers are registered by it).
The routes' behaviour is tested through a real server in test_handlers.py, test_compare_api.py
and test_static.py."""
from __future__ import annotations

import ast
import inspect
from pathlib import Path

import tornado.web

import jupyter_perf.server as server
from jupyter_perf.server import handlers

SERVER_DIR = Path(server.__file__).resolve().parent


def test_the_route_table():
    table = {route[0]: route[1].__name__ for route in server.routes("/base/")}
    assert table == {
        "/base/jupyter-perf/api/version": "VersionHandler",
        "/base/jupyter-perf/api/runs": "RunsHandler",
        "/base/jupyter-perf/api/runs/(?P<run_id>[^/]+)": "RunHandler",
        "/base/jupyter-perf/api/runs/(?P<run_id>[^/]+)/report": "ReportHandler",
        "/base/jupyter-perf/api/runs/(?P<run_id>[^/]+)/export": "ExportHandler",
        "/base/jupyter-perf/api/compare/(?P<a>[^/]+)/(?P<b>[^/]+)": "CompareHandler",
        "/base/jupyter-perf/api/compare/(?P<a>[^/]+)/(?P<b>[^/]+)/export": "CompareExportHandler",
        "/base/jupyter-perf/static/bokeh/(?P<version>[^/]+)/(?P<bundle>[^/]+)": "BokehJSHandler",
    }


def test_every_handler_class_is_routed():
    routed = {route[1] for route in server.routes("/")}
    defined = {cls for _, cls in inspect.getmembers(handlers, inspect.isclass)
               if cls.__module__ == handlers.__name__
               and issubclass(cls, tornado.web.RequestHandler)
               and any(verb in vars(cls) for verb in ("get", "post", "delete", "put", "head"))}
    assert defined and defined <= routed


def _imports_of_the_package(path: Path) -> list[str]:
    """Lines of ``path`` that import ``jupyter_perf.server`` itself (not one of its modules)."""
    modules = {p.stem for p in SERVER_DIR.glob("*.py")}
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module is None:
                found += [f"{path.name}:{node.lineno} from . import {a.name}"
                          for a in node.names if a.name not in modules]
            elif (node.level, node.module) in ((2, "server"), (0, "jupyter_perf.server")):
                found += [f"{path.name}:{node.lineno} from {node.module} import ..."]
            elif node.level == 2 and node.module is None and any(
                    a.name == "server" for a in node.names):
                found += [f"{path.name}:{node.lineno} from .. import server"]
        elif isinstance(node, ast.Import):
            found += [f"{path.name}:{node.lineno} import {a.name}" for a in node.names
                      if a.name == "jupyter_perf.server"]
    return found


def test_no_module_imports_the_one_that_registers_it():
    found = [line for path in sorted(SERVER_DIR.glob("*.py")) if path.name != "__init__.py"
             for line in _imports_of_the_package(path)]
    assert found == []


def test_the_layout_check_sees_the_old_cycle(tmp_path):
    """What handlers.py did before the route table moved: ``from . import API_NAMESPACE``."""
    planted = tmp_path / "handlers.py"
    planted.write_text("from . import API_NAMESPACE\nfrom . import runs_service\n")
    assert _imports_of_the_package(planted) == ["handlers.py:1 from . import API_NAMESPACE"]
