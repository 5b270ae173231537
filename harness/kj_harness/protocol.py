"""Framing between the trusted harness and the submission runner.

A frame is a 16-byte header (two little-endian u64: JSON length, payload length), the JSON
header, then an optional payload produced by ``torch.save``. Payloads coming from the runner
are untrusted and are only ever read with ``torch.load(weights_only=True)``, which refuses
anything but tensors and plain containers: the runner cannot make the harness run code.
"""

from __future__ import annotations

import io
import json
import os
import struct

_HEADER = struct.Struct("<QQ")
MAX_JSON_BYTES = 16 << 20


class ChannelClosed(Exception):
    """The other side closed the channel (usually: the runner process died)."""


class ProtocolError(Exception):
    """The other side sent something that is not a frame."""


def _read_exact(fd: int, n: int) -> bytes:
    chunks = []
    while n > 0:
        chunk = os.read(fd, min(n, 1 << 24))
        if not chunk:
            raise ChannelClosed()
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def send(fd: int, header: dict, payload: object = None) -> None:
    blob = b""
    if payload is not None:
        import torch

        buffer = io.BytesIO()
        torch.save(payload, buffer)
        blob = buffer.getvalue()
    text = json.dumps(header).encode()
    _write_all(fd, _HEADER.pack(len(text), len(blob)) + text + blob)


def receive(fd: int, max_payload: int) -> tuple[dict, bytes]:
    json_len, payload_len = _HEADER.unpack(_read_exact(fd, _HEADER.size))
    if json_len > MAX_JSON_BYTES or payload_len > max_payload:
        raise ProtocolError(f"frame too large ({json_len} + {payload_len} bytes)")
    try:
        header = json.loads(_read_exact(fd, json_len))
    except ValueError as exc:
        raise ProtocolError(f"bad frame header: {exc}") from None
    if not isinstance(header, dict):
        raise ProtocolError("frame header is not an object")
    return header, _read_exact(fd, payload_len) if payload_len else b""


def load_payload(blob: bytes, device: str):
    """Decodes an untrusted payload; only tensors and plain containers are accepted."""
    import torch

    return torch.load(io.BytesIO(blob), map_location=device, weights_only=True)
