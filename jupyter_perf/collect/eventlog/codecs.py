"""Spark's event-log codecs: each yields the decompressed bytes of one file, as lines.

Spark writes each codec in its own stream format, not the codec's usual file format:

=========  ==================================================  ==========================
codec      Spark's on-disk format                               decoded with
=========  ==================================================  ==========================
zstd       zstd frames (zstd-jni)  ``.zstd`` / ``.zst``         ``zstandard``
lz4        lz4-java ``LZ4BlockOutputStream`` blocks ``.lz4``    ``cramjam`` (raw lz4 block)
snappy     xerial ``SnappyOutputStream`` chunks ``.snappy``     ``cramjam`` (raw snappy)
lzf        ning ``LZFOutputStream`` chunks ``.lzf``             ``lzf`` if installed, else
                                                                a built-in decoder (slower)
=========  ==================================================  ==========================

A stream that is cut or corrupt ends at the break; :attr:`Stream.error` says where.
"""
from __future__ import annotations

import io
import os
import struct
from typing import Iterator

from .files import COMPACT, INPROGRESS, EventLogError

SUPPORTED_CODECS = ("zstd", "lz4", "snappy", "lzf")
CODEC_EXTENSIONS = {".zstd": "zstd", ".zst": "zstd", ".lz4": "lz4", ".snappy": "snappy",
                    ".lzf": "lzf"}
_READ = 1 << 20
_ZSTD_READ = 1 << 17


class _Broken(Exception):
    """Where and how a compressed stream broke ("is truncated", "is corrupt (...)")."""


def _exact(fh, n: int) -> bytes:
    data = fh.read(n) if n >= 0 else b""
    if len(data) < n or n < 0:
        raise _Broken("is truncated")
    return data


def _decoded(decompress, *args, **kwargs) -> bytes:
    try:
        return bytes(decompress(*args, **kwargs))
    except Exception as exc:  # cramjam.DecompressionError, lzf's ValueError
        raise _Broken(f"is corrupt ({exc})") from None


def _header(fh, size: int, magic: bytes, what: str) -> bytes | None:
    """The next block header; None at a clean end of the file."""
    head = fh.read(size)
    if not head:
        return None
    if len(head) < size:
        raise _Broken("is truncated")
    if not head.startswith(magic):
        raise _Broken(f"has a bad {what} header")
    return head


class Stream:
    """Decompressed byte chunks of one file; ``error`` says where decoding broke, if it did."""

    def __init__(self, path: str, codec: str | None):
        self.path, self.codec = path, codec
        self.error = ""
        self.compressed_bytes = 0

    def chunks(self) -> Iterator[bytes]:
        with open(self.path, "rb") as fh:
            if self.codec is None:
                while True:
                    block = fh.read(_READ)
                    if not block:
                        return
                    self.compressed_bytes += len(block)
                    yield block
            decode = {"zstd": self._zstd, "lz4": self._lz4, "snappy": self._snappy,
                      "lzf": self._lzf}[self.codec]
            try:
                yield from decode(fh)
            except _Broken as exc:
                self.error = (f"{os.path.basename(self.path)}: {self.codec} stream {exc} after "
                              f"{self.compressed_bytes} compressed bytes")

    def _zstd(self, fh) -> Iterator[bytes]:
        import zstandard

        reader = zstandard.ZstdDecompressor().stream_reader(fh, read_across_frames=True)
        while True:
            # zstd blocks are <= 128 KiB: small reads keep what precedes a corrupt block; a
            # stream cut mid-frame just ends
            block = _decoded(reader.read, _ZSTD_READ)
            self.compressed_bytes = fh.tell()
            if not block:
                return
            yield block

    def _lz4(self, fh) -> Iterator[bytes]:
        # lz4-java LZ4BlockOutputStream: "LZ4Block" token(1) compressedLen(4 LE)
        # decompressedLen(4 LE) checksum(4 LE) + data; token high nibble 0x10 raw, 0x20 lz4.
        import cramjam

        while (head := _header(fh, 21, b"LZ4Block", "block")) is not None:
            method = head[8] & 0xF0
            clen, ulen, _check = struct.unpack("<iii", head[9:21])
            if ulen == 0:      # end marker (stream closed cleanly); more may follow when appended
                self.compressed_bytes += 21
                continue
            data = _exact(fh, clen)
            self.compressed_bytes += 21 + clen
            yield data if method == 0x10 else _decoded(cramjam.lz4.decompress_block, data,
                                                       output_len=ulen)

    def _snappy(self, fh) -> Iterator[bytes]:
        # xerial SnappyOutputStream: 16-byte header (magic \x82SNAPPY\0, version, compatible
        # version), then chunks of compressedLen(4 BE) + raw snappy block.
        import cramjam

        if fh.read(16)[:8] != b"\x82SNAPPY\x00":
            raise _Broken("has no xerial snappy header (expected Spark's SnappyOutputStream)")
        self.compressed_bytes = 16
        while (size := _header(fh, 4, b"", "chunk")) is not None:
            (clen,) = struct.unpack(">i", size)
            data = _exact(fh, clen)
            self.compressed_bytes += 4 + clen
            yield _decoded(cramjam.snappy.decompress_raw, data)

    def _lzf(self, fh) -> Iterator[bytes]:
        # ning compress-lzf LZFOutputStream: "ZV" type(1); type 0: len(2 BE) + raw bytes;
        # type 1: compressedLen(2 BE) uncompressedLen(2 BE) + LZF data.
        try:
            import lzf as _lzf_mod

            def decompress(data: bytes, size: int) -> bytes:
                out = _lzf_mod.decompress(data, size)
                if out is None:
                    raise ValueError("bad LZF block")
                return out
        except ImportError:
            decompress = lzf_decompress
        while (head := _header(fh, 3, b"ZV", "chunk")) is not None:
            if head[2] == 0:
                (n,) = struct.unpack(">H", _exact(fh, 2))
                data = _exact(fh, n)
                self.compressed_bytes += 5 + n
                yield data
            else:
                clen, ulen = struct.unpack(">HH", _exact(fh, 4))
                data = _exact(fh, clen)
                self.compressed_bytes += 7 + clen
                yield _decoded(decompress, data, ulen)


def lzf_decompress(data: bytes, size: int) -> bytes:
    """LZF (liblzf) block decoder in pure Python, used when the ``lzf`` package is absent."""
    out = bytearray()
    i, n = 0, len(data)
    while i < n:
        ctrl = data[i]
        i += 1
        if ctrl < 32:                       # literal run of ctrl + 1 bytes
            out += data[i:i + ctrl + 1]
            i += ctrl + 1
        else:                               # back reference
            length = ctrl >> 5
            ref = len(out) - ((ctrl & 0x1F) << 8) - 1
            if length == 7:
                length += data[i]
                i += 1
            ref -= data[i]
            i += 1
            length += 2
            if ref < 0:
                raise ValueError("bad LZF back reference")
            if ref + length <= len(out):
                out += out[ref:ref + length]
            else:                           # overlapping copy, byte by byte
                for k in range(length):
                    out.append(out[ref + k])
    if len(out) != size:
        raise ValueError(f"LZF block decoded to {len(out)} bytes, expected {size}")
    return bytes(out)


class _ChunkReader(io.RawIOBase):
    """A read-only raw stream over decompressed chunks, so BufferedReader splits lines in C."""

    def __init__(self, chunks: Iterator[bytes]):
        self._chunks = chunks
        self._buf = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        while not len(self._buf):
            try:
                self._buf = memoryview(next(self._chunks))
            except StopIteration:
                return 0
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n


def codec_of(path: str) -> str | None:
    """The compression codec of an event-log file name (None = plain text)."""
    name = os.path.basename(path)
    for suffix in (INPROGRESS, COMPACT):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    ext = os.path.splitext(name)[1].lower()
    if ext in CODEC_EXTENSIONS:
        return CODEC_EXTENSIONS[ext]
    if ext in (".gz", ".bz2", ".xz", ".zip", ".gzip"):
        raise EventLogError(
            f"{os.path.basename(path)}: {ext} is not a Spark event-log codec; decompress it "
            f"first (supported codecs: {', '.join(SUPPORTED_CODECS)}, or plain text)")
    return None


def _check_codec(codec: str | None, path: str) -> None:
    missing = {"zstd": "zstandard", "lz4": "cramjam", "snappy": "cramjam"}.get(codec or "")
    if not missing:
        return
    try:
        __import__(missing)
    except ImportError:
        raise EventLogError(
            f"{os.path.basename(path)} is {codec}-compressed and the Python package "
            f"'{missing}' is missing: pip install {missing}") from None



def open_lines(path: str) -> tuple[Iterator[bytes], Stream | None, io.IOBase]:
    """(the file's decompressed lines, its Stream or None when plain, the handle to close)."""
    codec = codec_of(path)
    _check_codec(codec, path)
    if codec is None:
        fh = open(path, "rb", buffering=_READ)
        return iter(fh), None, fh
    stream = Stream(path, codec)
    reader = io.BufferedReader(_ChunkReader(stream.chunks()), buffer_size=_READ)
    return iter(reader), stream, reader
