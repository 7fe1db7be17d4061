"""The installed package is a working JupyterLab + jupyter_server extension.

Checks what `pip install jupyter-perf` must give a user with no Node: the
prebuilt labextension where JupyterLab looks for it, the server extension
enabled by config, every REST handler behind authentication, and one version
everywhere.
"""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

import jupyter_perf

pytest_plugins = ("pytest_jupyter.jupyter_server",)

REPO = Path(__file__).resolve().parent.parent
PACKAGE_DIR = Path(jupyter_perf.__file__).resolve().parent


def _installed_labextension_dir() -> Path:
    """The directory JupyterLab itself would load jupyter-perf from."""
    from jupyter_core.paths import jupyter_path

    for root in jupyter_path("labextensions"):
        candidate = Path(root) / "jupyter-perf"
        if (candidate / "package.json").is_file():
            return candidate
    pytest.fail("jupyter-perf is not in any labextensions data dir: "
                f"{jupyter_path('labextensions')}")


def test_labextension_paths_exposed():
    paths = jupyter_perf._jupyter_labextension_paths()
    assert paths == [{"src": "labextension", "dest": "jupyter-perf"}]


def test_server_extension_points_exposed():
    points = jupyter_perf._jupyter_server_extension_points()
    assert len(points) == 1
    module = __import__(points[0]["module"], fromlist=["_load_jupyter_server_extension"])
    assert callable(module._load_jupyter_server_extension)


def test_importing_the_package_does_not_import_the_server_stack():
    import subprocess
    import sys

    code = ("import sys, jupyter_perf; "
            "print(any(m.startswith(('jupyter_server', 'tornado')) for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"


def test_prebuilt_labextension_installed():
    ext = _installed_labextension_dir()
    meta = json.loads((ext / "package.json").read_text())
    assert meta["name"] == "jupyter-perf"
    assert meta["version"] == jupyter_perf.__version__
    load = meta["jupyterlab"]["_build"]["load"]
    assert (ext / load).is_file()
    assert (ext / "static" / "style.js").is_file()
    assert (ext / "schemas" / "jupyter-perf" / "plugin.json").is_file()   # the settings schema
    if ext.is_symlink() and ext.resolve() == (PACKAGE_DIR / "labextension").resolve():
        return  # `jupyter labextension develop .`: install.json is only copied by pip
    install = json.loads((ext / "install.json").read_text())
    assert install["packageManager"] == "python"
    assert install["packageName"] == "jupyter-perf"


def test_built_labextension_in_source_tree():
    """In a source checkout the build output lives in jupyter_perf/labextension."""
    if not (REPO / "package.json").is_file():
        pytest.skip("not a source checkout")
    built = PACKAGE_DIR / "labextension" / "package.json"
    if not built.is_file():
        pytest.skip("installed from a wheel; the labextension is under share/")
    assert json.loads(built.read_text())["name"] == "jupyter-perf"


def test_package_json_version_matches_python_version():
    if not (REPO / "package.json").is_file():
        pytest.skip("not a source checkout")
    meta = json.loads((REPO / "package.json").read_text())
    assert meta["version"] == jupyter_perf.__version__
    assert meta["jupyterlab"]["outputDir"] == "jupyter_perf/labextension"
    assert meta["jupyterlab"]["schemaDir"] == "schema"
    # the frontend compares this constant with GET /jupyter-perf/api/version
    version_ts = (REPO / "labextension" / "src" / "version.ts").read_text()
    assert f"FRONTEND_VERSION = '{jupyter_perf.__version__}'" in version_ts


def test_server_extension_enabled_by_config():
    from jupyter_core.paths import jupyter_config_path

    enabled = {}
    for root in jupyter_config_path():
        cfg = Path(root) / "jupyter_server_config.d" / "jupyter_perf.json"
        if cfg.is_file():
            enabled = json.loads(cfg.read_text())["ServerApp"]["jpserver_extensions"]
            break
    assert enabled.get("jupyter_perf") is True


def test_every_handler_requires_authentication():
    """jupyter_server warns about any handler verb without an auth decorator."""
    from jupyter_server.serverapp import ServerApp
    from jupyter_server.utils import JupyterServerAuthWarning

    app = ServerApp(
        allow_unauthenticated_access=False,
        jpserver_extensions={"jupyter_perf": True},
        reraise_server_extension_failures=True,
    )
    try:
        with warnings.catch_warnings(record=True) as records:
            warnings.simplefilter("always")
            app.initialize(argv=[], find_extensions=False, new_httpserver=False)
        problems = [str(r.message) for r in records
                    if issubclass(r.category, JupyterServerAuthWarning)]
        assert problems == []
        assert "jupyter_perf" in app.extension_manager.extensions
        assert app.extension_manager.extensions["jupyter_perf"].enabled
    finally:
        ServerApp.clear_instance()


@pytest.fixture
def jp_server_config(jp_server_config):
    return {"ServerApp": {"jpserver_extensions": {"jupyter_perf": True}}}


async def test_version_endpoint(jp_fetch):
    response = await jp_fetch("jupyter-perf", "api", "version")
    assert response.code == 200
    assert json.loads(response.body) == {"version": jupyter_perf.__version__}


async def test_version_endpoint_refuses_anonymous(jp_fetch):
    from tornado.httpclient import HTTPClientError

    with pytest.raises(HTTPClientError) as err:
        await jp_fetch("jupyter-perf", "api", "version", headers={"Authorization": ""})
    assert err.value.code in (401, 403)


def test_labextension_jest_specs():
    """`jlpm test` (jest: the sidebar's model and formatting) passes, so `make test` covers it."""
    import os
    import shutil
    import subprocess
    import sys

    if not (REPO / "package.json").is_file():
        pytest.skip("not a source checkout: the jest specs live in labextension/src/__tests__")
    if not (REPO / "node_modules" / ".bin" / "jest").exists():
        pytest.skip("node_modules/ has no jest: run `jlpm install` in the repo root first")
    jlpm = shutil.which("jlpm") or shutil.which("jlpm", path=os.path.dirname(sys.executable))
    if jlpm is None:
        pytest.skip("jlpm not found: it comes with jupyter-builder / jupyterlab in this venv")
    done = subprocess.run([jlpm, "test", "--ci", "--silent"], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
