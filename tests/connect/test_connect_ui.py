"""Where a Connect server's Spark UI is (``collect/connect.py``): the address a user gives is
cut back to the UI root, and one that cannot be a Spark UI is refused in one line before any
request. No Spark needed: these run on pyspark 3.5 and 4.x alike. (The UI of real servers,
direct and behind a proxy prefix: test_connect_local.py, test_connect_server.py.)"""
from __future__ import annotations

import socket

import pytest

from jupyter_perf.collect.connect import normalize_ui_url, probe


@pytest.mark.parametrize("given, root", [
    ("host:4040", "http://host:4040"),
    (" http://h:4040/ ", "http://h:4040"),
    ("http://h:4040/jobs/", "http://h:4040"),                               # a pasted page
    ("http://h:4040/api/v1/applications/app-1/jobs", "http://h:4040"),      # an API address
    ("https://gw/proxy/4040/stages/stage/?id=1", "https://gw/proxy/4040"),  # prefix kept
    ("https://gw/gateway/sparkui", "https://gw/gateway/sparkui"),
])
def test_a_given_address_is_cut_back_to_the_ui_root(given, root):
    assert normalize_ui_url(given) == root


@pytest.mark.parametrize("url", ["http://", "ftp://host:4040", "file:///tmp/ui"])
def test_an_address_that_cannot_be_a_spark_ui_is_one_line_with_the_next_step(url):
    line = probe(url, "app-1")
    assert line == (f"{url!r} is not a Spark UI address: give its root, e.g. http://host:4040, "
                    "or the proxy's prefix for it")


def test_a_ui_where_nothing_listens_is_unreachable():
    with socket.socket() as s:           # a port that was free a moment ago; nothing listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert probe(f"http://127.0.0.1:{port}", "app-1") == \
        f"the Spark UI at http://127.0.0.1:{port} is unreachable"
