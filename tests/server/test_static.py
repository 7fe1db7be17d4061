"""The BokehJS route of the server extension (jupyter_perf/server/static.py), through a real
Jupyter server (jp_fetch) under a non-default base URL, as JupyterHub serves one."""
from __future__ import annotations

import json
from pathlib import Path

import bokeh
import pytest
from bokeh.resources import INLINE
from bokeh.util.paths import bokehjs_path
from tornado.httpclient import HTTPClientError

from jupyter_perf.constants import BOKEH_NAMESPACE

STATIC = tuple(BOKEH_NAMESPACE.split("/"))
VERSION = bokeh.__version__
JS_DIR = Path(bokehjs_path()) / "js"


@pytest.fixture
def jp_base_url():
    return "/user/someone/"


async def refused(jp_fetch, *parts, **kw) -> tuple[int, dict, object]:
    """(status, JSON body, headers) of a request that must fail."""
    with pytest.raises(HTTPClientError) as err:
        await jp_fetch(*parts, **kw)
    response = err.value.response
    body = response.body if response is not None else b""
    return err.value.code, (json.loads(body) if body else {}), \
        (response.headers if response is not None else {})


@pytest.mark.parametrize("bundle", ["bokeh.min.js", "bokeh-widgets.min.js",
                                    "bokeh-tables.min.js", "bokeh.js"])
async def test_serves_the_installed_bokehs_own_files(jp_fetch, jp_base_url, bundle):
    response = await jp_fetch(*STATIC, VERSION, bundle)
    assert response.code == 200
    assert response.request.url.split("?")[0].endswith(
        f"{jp_base_url}jupyter-perf/static/bokeh/{VERSION}/{bundle}")
    assert response.body == (JS_DIR / bundle).read_bytes()
    assert "javascript" in response.headers["Content-Type"]
    assert f'"{VERSION}"' in response.body.decode()[:5000] or VERSION in response.body.decode()


async def test_is_the_bokehjs_that_inline_reports_embed(jp_fetch):
    """The same BokehJS as bokeh.resources.INLINE (what the standalone report inlines)."""
    served = (await jp_fetch(*STATIC, VERSION, "bokeh.min.js")).body.decode()
    assert served.strip() and served.strip() in INLINE.js_raw[0]


async def test_cache_headers(jp_fetch):
    response = await jp_fetch(*STATIC, VERSION, "bokeh.min.js")
    cache = response.headers["Cache-Control"]
    # versioned URL: the answer never changes, and it needed credentials
    assert "immutable" in cache and "max-age=31536000" in cache and "private" in cache
    assert "public" not in cache and "no-cache" not in cache
    etag = response.headers["Etag"]
    assert etag and response.headers["Last-Modified"]
    # revalidation answers 304 without a body
    with pytest.raises(HTTPClientError) as err:
        await jp_fetch(*STATIC, VERSION, "bokeh.min.js", headers={"If-None-Match": etag})
    assert err.value.code == 304


async def test_head(jp_fetch):
    response = await jp_fetch(*STATIC, VERSION, "bokeh.min.js", method="HEAD")
    assert response.code == 200 and response.body == b""
    assert int(response.headers["Content-Length"]) == (JS_DIR / "bokeh.min.js").stat().st_size


async def test_refuses_anonymous_requests(jp_fetch):
    for method in ("GET", "HEAD"):
        code, body, headers = await refused(jp_fetch, *STATIC, VERSION, "bokeh.min.js",
                                            method=method, headers={"Authorization": ""},
                                            follow_redirects=False)
        assert code == 403, method      # not a redirect to the login page
        if method == "GET":
            assert "not authenticated" in body["error"]
            assert headers["Cache-Control"] == "no-store"


async def test_another_bokeh_version_is_a_404_naming_both(jp_fetch):
    code, body, headers = await refused(jp_fetch, *STATIC, "2.4.3", "bokeh.min.js")
    assert code == 404
    assert VERSION in body["error"] and "2.4.3" in body["error"] and "\n" not in body["error"]
    assert body["bokeh_version"] == VERSION
    assert headers["Cache-Control"] == "no-store"


@pytest.mark.parametrize("path", [
    "..%2F..%2F__init__.py",                 # encoded slashes
    "..%2F..%2F..%2Fbokeh%2F__init__.py",
    "%2e%2e%2f%2e%2e%2fsettings.py",
    "..%5C..%5C__init__.py",                 # encoded backslashes
    "bokeh.min.js%00.py",                    # NUL byte
    "%2Fetc%2Fpasswd",                       # absolute path
    "compiler.js",                           # a file of that folder, but not a bundle
    "bokeh-nothing.min.js",                  # shaped like a bundle, not there
    ".bokeh.min.js",
])
async def test_path_traversal_and_other_files_are_refused(jp_fetch, path):
    assert (JS_DIR / "compiler.js").exists()   # so the refusal is the route's doing
    code, body, _ = await refused(jp_fetch, *STATIC, VERSION, path)
    assert code == 404 and body["error"] and "\n" not in body["error"]
    assert "bokeh_version" in body


@pytest.mark.parametrize("parts", [
    (VERSION, "..", "..", "__init__.py"),
    (VERSION, "lib", "bokeh.js"),
    ("..", "js", "bokeh.min.js"),
])
async def test_more_than_one_segment_never_matches(jp_fetch, parts):
    with pytest.raises(HTTPClientError) as err:
        await jp_fetch(*STATIC, *parts)
    assert err.value.code == 404
