"""History logs at rest: which files of a directory are logs, reading one's lines as a
stream whether plain or zstd-compressed, and compressing a finished log.

Contract (docs/design.md, "The run directory"): a log is ``<process>.jsonl`` (plain JSON
lines, as a worker writes it, kill-safe) or ``<process>.jsonl.zst`` (the same bytes,
zstandard-compressed once the log is finished). :func:`compress_log` writes the ``.zst``
beside the plain file under a temporary name, renames it into place, then removes the plain
file; so at every instant one complete copy exists, and if both are present (the compressor
was killed between the rename and the removal) the plain one is read and the other ignored.
A ``.zst`` cut short (a disk copy that stopped mid-file) still yields every line before
the cut; the torn line at the cut is the reader's to drop (:mod:`harness.history`).

Only a log whose writer has ended may be compressed: a plain log is the live one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import zstandard

from harness.errors import HistoryError

__all__ = ["LEVEL", "PLAIN", "ZST", "compress_log", "compress_logs", "iter_lines", "log_files"]

PLAIN = ".jsonl"
ZST = ".jsonl.zst"
#: zstd level: 3 (the codec's default) compresses a worker log about 11x at ~600 MB/s on one
#: core; level 1 is twice as fast for 3% more bytes. Logs are compressed once, at the end.
LEVEL = 3
_CHUNK = 1 << 20


def log_files(directory: Path) -> list[Path]:
    """The logs in ``directory``, one per process, sorted by name: ``<p>.jsonl`` where it
    exists, else ``<p>.jsonl.zst``."""
    plain = {p.name[: -len(PLAIN)]: p for p in directory.glob("*" + PLAIN)}
    packed = {p.name[: -len(ZST)]: p for p in directory.glob("*" + ZST)}
    return [plain.get(stem) or packed[stem] for stem in sorted(plain.keys() | packed.keys())]


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


def _chunks(fh: _Readable, path: Path) -> Iterator[bytes]:
    try:
        while chunk := fh.read(_CHUNK):
            yield chunk
    except zstandard.ZstdError as err:
        raise HistoryError(f"cannot read history {path}: not a zstd log ({err})") from None


def iter_lines(path: str | os.PathLike[str]) -> Iterator[bytes]:
    """The lines of a plain or ``.zst`` log, without their newlines, read a chunk at a time
    (memory bounded by the longest line). The last item is what follows the last newline
    (``b""`` for a whole file), so a reader can tell a torn tail from a whole line."""
    p = Path(path)
    try:
        raw = open(p, "rb")  # noqa: SIM115 - closed below, after the generator is drained
    except OSError as err:
        raise HistoryError(f"cannot read history {p}: {err.strerror or err}") from err
    with raw:
        fh: _Readable = raw
        if p.name.endswith(".zst"):
            fh = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
        tail = b""
        try:
            for chunk in _chunks(fh, p):
                lines = (tail + chunk).split(b"\n")
                tail = lines.pop()
                yield from lines
        except OSError as err:
            raise HistoryError(f"cannot read history {p}: {err.strerror or err}") from err
        yield tail


def compress_log(path: Path, level: int = LEVEL) -> Path:
    """Compress a finished plain log to ``<p>.jsonl.zst`` and remove the plain file (see the
    module docstring for why this is safe at every instant). Returns the new path."""
    out = path.with_name(path.name[: -len(PLAIN)] + ZST)
    tmp = out.with_name(out.name + ".tmp")
    with open(path, "rb") as src, open(tmp, "wb") as dst:
        zstandard.ZstdCompressor(level=level).copy_stream(src, dst, size=os.fstat(src.fileno()).st_size)
        dst.flush()
        os.fsync(dst.fileno())  # the rename must not publish a file whose bytes are not on disk
    os.replace(tmp, out)
    path.unlink()
    return out


def compress_logs(directory: Path, level: int = LEVEL) -> list[Path]:
    """Compress every plain log in ``directory`` (each one's writer must have ended)."""
    return [compress_log(p, level) for p in sorted(directory.glob("*" + PLAIN))]
