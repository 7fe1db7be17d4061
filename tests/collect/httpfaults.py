"""A real local HTTP server (a thread, a free port) that answers like Spark's REST API or
misbehaves on demand: HTML, wrong JSON, wrong statuses, slow drips, stalls, resets.

Real Spark cannot produce these faults on demand, so the REST client's tests use this
server for them; every answer it replays was first recorded from a real Spark UI through
:meth:`FaultyServer.record` (a pass-through proxy), so the happy path is Spark's own bytes.

    server = FaultyServer().start()
    server.record(real_ui_url)        # proxy: remember every answer the client asked for
    ... load_rest(server.url, app_id) ...
    server.replay()                   # from now on answer from the recordings
    server.faults[key] = ("drip_body", {...})
"""
from __future__ import annotations

import contextlib
import http.server
import select
import socket
import struct
import threading
import time
from typing import Any

import requests

HTML = (b"<!DOCTYPE html><html><head><title>Sign in</title></head><body>"
        b"<form action=/login><input name=user></form></body></html>")


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = -1     # headers and body leave in one write (no Nagle/delayed-ACK pauses)
    server: "_Server"

    def log_message(self, *args: Any) -> None:   # quiet
        pass

    def do_GET(self) -> None:  # http.server's name
        owner = self.server.owner
        owner.requests.append(self.path)
        if owner.upstream is not None:
            self._proxy(owner)
            return
        fault = owner.faults.get(self.path)
        if fault is None:
            fault = owner.faults.get("*")
        recorded = owner.answers.get(self.path)
        if fault is None:
            if recorded is None:
                self._send(404, b'{"message": "no such recording"}', "application/json")
            else:
                self._send(*recorded)
            return
        kind, args = fault
        body = args.get("body", recorded[1] if recorded else b"[]")
        getattr(self, f"_fault_{kind}")(owner, body, **{k: v for k, v in args.items()
                                                         if k != "body"})

    # -- plain answers -----------------------------------------------------
    def _send(self, status: int, body: bytes, content_type: str = "application/json",
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def _proxy(self, owner: "FaultyServer") -> None:
        resp = requests.get(owner.upstream + self.path, timeout=60)
        answer = (resp.status_code, resp.content,
                  resp.headers.get("Content-Type", "application/json"))
        owner.answers[self.path] = answer
        self._send(*answer)

    # -- faults (each named by the key used in ``FaultyServer.faults``) -------
    def _fault_answer(self, owner, body, status=200, content_type="application/json",
                      headers=None):
        self._send(status, body, content_type, headers)

    def _fault_drip_body(self, owner, body, interval=0.02, forever=False):
        """Headers at once, then the body one byte per ``interval`` (``forever``: never
        ends until the client hangs up)."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if forever:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        i = 0
        while not owner.stopping.is_set():
            if not forever and i >= len(body):
                return
            byte = body[i % len(body): i % len(body) + 1] if body else b" "
            try:
                self.wfile.write(b"1\r\n" + byte + b"\r\n" if forever else byte)
                self.wfile.flush()
            except OSError:
                owner.client_left.set()
                return
            i += 1
            time.sleep(interval)

    def _fault_drip_headers(self, owner, body, interval=0.02):
        """A status line, then one header byte per ``interval`` until the client hangs up."""
        try:
            self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            self.wfile.flush()
            while not owner.stopping.is_set():
                self.wfile.write(b"a")
                self.wfile.flush()
                time.sleep(interval)
        except OSError:
            owner.client_left.set()
        self.close_connection = True

    def _fault_stall(self, owner, body):
        """Read the request, answer nothing, keep the connection open until the client
        hangs up."""
        while not owner.stopping.is_set():
            ready, _, _ = select.select([self.connection], [], [], 0.05)
            if ready:
                try:
                    gone = not self.connection.recv(1, socket.MSG_PEEK)
                except OSError:
                    gone = True
                if gone:
                    owner.client_left.set()
                    break
        self.close_connection = True

    def _fault_reset(self, owner, body, after=0, headers_first=False):
        """Send the headers (optionally) and ``after`` bytes of the body, then a TCP reset."""
        if headers_first:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[:after])
            self.wfile.flush()
        self._reset()

    def _fault_short(self, owner, body, after=0):
        """Promise the whole body, send ``after`` bytes, close cleanly."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body) + 10))
        self.end_headers()
        self.wfile.write(body[:after])
        self.wfile.flush()
        self.close_connection = True

    def _fault_gzip_garbage(self, owner, body):
        self._send(200, body, "application/json", {"Content-Encoding": "gzip"})

    def _reset(self) -> None:
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
            self.connection.close()
        self.close_connection = True


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    owner: "FaultyServer"

    def handle_error(self, request, client_address) -> None:   # resets are the point
        pass


class FaultyServer:
    def __init__(self) -> None:
        self.answers: dict[str, tuple[int, bytes, str]] = {}
        self.faults: dict[str, tuple[str, dict[str, Any]]] = {}
        self.requests: list[str] = []
        self.upstream: str | None = None
        self.stopping = threading.Event()
        self.client_left = threading.Event()
        self.httpd = _Server(("127.0.0.1", 0), _Handler)
        self.httpd.owner = self
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True,
                                       name="faulty-http-server")

    def start(self) -> "FaultyServer":
        self.thread.start()
        return self

    def record(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")

    def replay(self) -> None:
        self.upstream = None

    def reset_faults(self) -> None:
        self.faults.clear()
        self.requests.clear()
        self.client_left.clear()

    def stop(self) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()
