"""Framing between the trusted harness and the submission runner.

A frame is a 16-byte header (two little-endian u64: JSON length, payload length), the JSON
header, then an optional payload of raw tensor bytes. Outputs travel as data, never as code:
the header's `_layout` describes them (plain containers, scalars, and tensors by dtype, shape and
byte range) and the receiver rebuilds each tensor from the bytes after checking every field, so
the runner cannot make the harness run anything. Raw bytes, a large pipe buffer and reads into
one preallocated buffer keep a re-check of gigabytes of outputs to a few copies.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import struct

_HEADER = struct.Struct("<QQ")
MAX_JSON_BYTES = 16 << 20
MAX_DEPTH = 32
MAX_ITEMS = 100_000
ALIGN = 64  # every tensor starts at a multiple of this in the payload, so a dtype view is legal
PIPE_BYTES = 1 << 20
_DTYPES = ("float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8",
           "uint8", "bool", "complex64", "complex128", "float8_e4m3fn", "float8_e5m2", "uint16",
           "uint32", "uint64")


class ChannelClosed(Exception):
    """The other side closed the channel (usually: the runner process died)."""


class ProtocolError(Exception):
    """The other side sent something that is not a frame."""


class Payload:
    """A received payload: its layout (from the header) and the raw bytes as a uint8 tensor."""

    def __init__(self, layout, data):
        self.layout = layout
        self.data = data


def widen_pipe(fd: int) -> None:
    """Asks for a 1 MiB pipe buffer (64 KiB by default): far fewer wake-ups per gigabyte."""
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (OSError, AttributeError):
        pass


def _read_exact(fd: int, n: int) -> bytes:
    chunks = []
    while n > 0:
        chunk = os.read(fd, min(n, 1 << 24))
        if not chunk:
            raise ChannelClosed()
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _read_into(fd: int, view: memoryview) -> None:
    while view:
        got = os.readv(fd, [view[:1 << 26]])
        if got == 0:
            raise ChannelClosed()
        view = view[got:]


def _write_all(fd: int, data) -> None:
    view = memoryview(data).cast("B")
    while view:
        written = os.write(fd, view[:1 << 26])
        view = view[written:]


def _flatten(obj, tensors: list, depth: int = 0):
    """The layout of `obj`; its tensors are appended to `tensors`. TypeError for anything that
    is not a tensor, a plain container of them, or a scalar."""
    import torch

    if depth > MAX_DEPTH or len(tensors) > MAX_ITEMS:
        raise TypeError("the output nests too deep or holds too many items")
    if isinstance(obj, torch.Tensor):
        if type(obj) is not torch.Tensor and type(obj) is not torch.nn.Parameter:
            raise TypeError(f"a tensor subclass ({type(obj).__name__}) is not a plain tensor")
        if obj.layout != torch.strided or obj.device.type not in ("cpu", "cuda"):
            raise TypeError(f"a {obj.layout} tensor on {obj.device} cannot be sent")
        if str(obj.dtype).removeprefix("torch.") not in _DTYPES:
            raise TypeError(f"tensors of dtype {obj.dtype} cannot be sent")
        tensors.append(obj)
        return {"tensor": len(tensors) - 1}
    if obj is None or isinstance(obj, (bool, int, float, str)) and type(obj) in (bool, int, float, str):
        if isinstance(obj, str) and len(obj) > 4096:
            raise TypeError("a string in the output is too long")
        if isinstance(obj, float) and not math.isfinite(obj):
            return {"float": repr(obj)}
        return {"value": obj}
    if type(obj) in (list, tuple):
        return {type(obj).__name__: [_flatten(x, tensors, depth + 1) for x in obj]}
    if type(obj) is dict:
        if not all(type(k) in (str, int) for k in obj):
            raise TypeError("dict keys in the output must be str or int")
        return {"dict": [[k, _flatten(v, tensors, depth + 1)] for k, v in obj.items()]}
    kind = named_tuple_kind(obj)
    if kind is not None:
        # Read with tuple's own iterator: no method of the submission's class runs here.
        items = [_flatten(x, tensors, depth + 1) for x in tuple.__iter__(obj)]
        if kind[0] == "return_type":
            return {"return_type": [kind[1], items]}
        return {"namedtuple": [kind[1], list(kind[2]), items]}
    raise TypeError(f"a {type(obj).__name__} is not a tensor or a plain container of tensors")


def named_tuple_kind(obj):
    """("return_type", name) for a torch.return_types structseq (what torch.linalg.qr,
    torch.geqrf, torch.topk... return), ("namedtuple", name, fields) for a named tuple, else
    None. Only the type's name and field names are read, from its own class dict, so a class
    of the submission's cannot run code here; the receiver builds a type of its own."""
    cls = type(obj)
    if type(cls) is not type or not issubclass(cls, tuple) or cls is tuple:
        return None
    if cls.__module__ == "torch.return_types":
        import torch.return_types

        if getattr(torch.return_types, cls.__name__, None) is cls:
            return ("return_type", cls.__name__)
        return None
    fields = cls.__dict__.get("_fields")
    if cls.__bases__ == (tuple,) and _valid_named_tuple(cls.__name__, fields) and \
            len(fields) == tuple.__len__(obj):
        return ("namedtuple", cls.__name__, fields)
    return None


def _valid_named_tuple(name, fields) -> bool:
    import keyword

    def ok(word) -> bool:
        return type(word) is str and word.isidentifier() and not keyword.iskeyword(word) \
            and not word.startswith("_") and len(word) <= 64

    return ok(name) and type(fields) is tuple and 0 < len(fields) <= 64 and \
        all(ok(f) for f in fields) and len(set(fields)) == len(fields)


def send(fd: int, header: dict, payload: object = None, ipc_hold: list | None = None,
         staging=None) -> None:
    """Sends a frame. With `ipc_hold`, CUDA tensors travel as IPC handles (cudaipc) instead of
    bytes (stage_for_ipc: the buffers the handles point into are appended to `ipc_hold`, and the
    caller keeps them until the other side has copied them). cudaipc.IpcUnavailable when a
    tensor cannot be exported; nothing was written then."""
    chunks = []
    if payload is not None:
        import torch

        tensors: list = []
        layout = _flatten(payload, tensors)
        descs, offset = [], 0
        if ipc_hold is not None:
            descs = stage_for_ipc(tensors, ipc_hold, staging or CudaStaging())
        else:
            descs = [None] * len(tensors)
        for i, t in enumerate(tensors):
            if descs[i] is not None:
                continue
            data = t.detach()
            if data.device.type != "cpu":
                data = data.cpu()
            raw = data.contiguous().reshape(-1).view(torch.uint8)
            pad = -offset % ALIGN
            if pad:
                chunks.append(bytes(pad))
                offset += pad
            descs[i] = {"dtype": str(t.dtype).removeprefix("torch."), "shape": list(t.shape),
                        "offset": offset, "nbytes": raw.numel()}
            chunks.append(raw.numpy())
            offset += raw.numel()
        header = {**header, "_layout": {"root": layout, "tensors": descs}}
        length = offset
    else:
        length = 0
    text = json.dumps(header).encode()
    _write_all(fd, _HEADER.pack(len(text), length) + text)
    for chunk in chunks:
        if len(chunk):
            _write_all(fd, chunk)


class CudaStaging:
    """What a hand-over by IPC needs of the device: which tensors go by handle, a copy into a
    buffer of its own, a fence after which every such copy has landed, the handle of a buffer."""

    def wants(self, tensor) -> bool:
        return tensor.device.type == "cuda"

    def copy(self, tensor):
        import torch

        return tensor.detach().clone(memory_format=torch.contiguous_format)

    def fence(self, device) -> None:
        import torch

        torch.cuda.synchronize(device)

    def export(self, buffer) -> dict:
        from . import cudaipc

        return cudaipc.export(buffer)


def stage_for_ipc(tensors: list, hold: list, staging) -> list:
    """Descriptions of `tensors` for the receiver: each CUDA tensor copied into a buffer that
    only `hold` references (nothing the submission still holds can change it), every copy
    fenced before any handle is made, so the receiver, which copies on its own stream in another
    process, can only read finished bytes. Other tensors get None (they go as bytes)."""
    staged = {i: staging.copy(t) for i, t in enumerate(tensors) if staging.wants(t)}
    for device in {b.device for b in staged.values()}:
        staging.fence(device)
    descs = [None] * len(tensors)
    for i, buffer in staged.items():
        descs[i] = {"dtype": str(buffer.dtype).removeprefix("torch."), "shape": list(buffer.shape),
                    "ipc": staging.export(buffer), "nbytes": buffer.numel() * buffer.element_size()}
    hold.extend(staged.values())
    return descs


def receive(fd: int, max_payload: int) -> tuple[dict, Payload | bytes]:
    json_len, payload_len = _HEADER.unpack(_read_exact(fd, _HEADER.size))
    if json_len > MAX_JSON_BYTES or payload_len > max_payload:
        raise ProtocolError(f"frame too large ({json_len} + {payload_len} bytes)")
    try:
        header = json.loads(_read_exact(fd, json_len))
    except ValueError as exc:
        raise ProtocolError(f"bad frame header: {exc}") from None
    if not isinstance(header, dict):
        raise ProtocolError("frame header is not an object")
    layout = header.pop("_layout", None)
    if layout is None:
        if payload_len:
            raise ProtocolError("a payload without a layout")
        return header, b""
    import torch

    data = torch.empty(payload_len, dtype=torch.uint8)
    if payload_len:
        _read_into(fd, memoryview(data.numpy()))
    return header, Payload(layout, data)


def load_payload(blob, device: str):
    """Rebuilds an untrusted payload: only tensors, plain containers and scalars come out, and
    every tensor must lie inside the bytes received."""
    import torch

    if not isinstance(blob, Payload):
        raise ProtocolError("no output was sent")
    layout = blob.layout
    if not isinstance(layout, dict) or not isinstance(layout.get("tensors"), list):
        raise ProtocolError("bad output layout")
    tensors = []
    with contextlib.ExitStack() as stack:
        opened = None
        for desc in layout["tensors"][:MAX_ITEMS + 1]:
            if not isinstance(desc, dict) or desc.get("dtype") not in _DTYPES:
                raise ProtocolError(f"bad tensor description {str(desc)[:200]}")
            shape, nbytes, ipc = desc.get("shape"), desc.get("nbytes"), desc.get("ipc")
            offset = ipc.get("offset") if isinstance(ipc, dict) else desc.get("offset")
            if not isinstance(shape, list) or len(shape) > 64 or \
                    not all(type(d) is int and 0 <= d < 1 << 48 for d in shape) or \
                    type(offset) is not int or type(nbytes) is not int or \
                    (ipc is None and offset % ALIGN) or (ipc is not None and not isinstance(ipc, dict)):
                raise ProtocolError(f"bad tensor description {str(desc)[:200]}")
            dtype = getattr(torch, desc["dtype"])
            size = torch.empty((), dtype=dtype).element_size()
            if nbytes != math.prod(shape) * size:
                raise ProtocolError(f"tensor bytes out of range {str(desc)[:200]}")
            if ipc is not None:
                # Device memory of the runner's: copied into the harness's own before any use.
                if not device.startswith("cuda") or not isinstance(ipc.get("handle"), str):
                    raise ProtocolError(f"bad tensor description {str(desc)[:200]}")
                if opened is None:
                    from . import cudaipc

                    opened = stack.enter_context(cudaipc.Opened(device))
                try:
                    flat = opened.copy(ipc["handle"], offset, nbytes)
                except ValueError as exc:
                    raise ProtocolError(f"{exc}: {str(desc)[:200]}") from None
                tensors.append(flat.view(dtype).reshape(shape))
                continue
            if not 0 <= offset <= offset + nbytes <= blob.data.numel():
                raise ProtocolError(f"tensor bytes out of range {str(desc)[:200]}")
            flat = blob.data[offset:offset + nbytes]
            tensors.append(flat.view(dtype).reshape(shape).to(device))
        if opened is not None:
            import torch.cuda

            torch.cuda.synchronize(device)  # the copies are done before the handles close

    def build(node, depth=0):
        if depth > MAX_DEPTH or not isinstance(node, dict) or len(node) != 1:
            raise ProtocolError("bad output layout")
        (kind, value), = node.items()
        if kind == "tensor":
            if type(value) is not int or not 0 <= value < len(tensors):
                raise ProtocolError("bad tensor reference in the output layout")
            return tensors[value]
        if kind == "value":
            if value is not None and type(value) not in (bool, int, float, str):
                raise ProtocolError("bad scalar in the output layout")
            return value
        if kind == "float":
            if value not in ("nan", "inf", "-inf"):
                raise ProtocolError("bad float in the output layout")
            return float(value)
        if kind in ("list", "tuple") and isinstance(value, list):
            items = [build(x, depth + 1) for x in value]
            return items if kind == "list" else tuple(items)
        if kind == "return_type" and isinstance(value, list) and len(value) == 2:
            return _return_type(value[0], [build(x, depth + 1) for x in _items(value[1])])
        if kind == "namedtuple" and isinstance(value, list) and len(value) == 3:
            cls = named_tuple_type(value[0], value[1])
            return cls(*[build(x, depth + 1) for x in _items(value[2])])
        if kind == "dict" and isinstance(value, list):
            out = {}
            for pair in value:
                if not isinstance(pair, list) or len(pair) != 2 or type(pair[0]) not in (str, int):
                    raise ProtocolError("bad dict in the output layout")
                out[pair[0]] = build(pair[1], depth + 1)
            return out
        raise ProtocolError("bad output layout")

    return build(layout.get("root"))


def _items(value) -> list:
    if not isinstance(value, list) or len(value) > MAX_ITEMS:
        raise ProtocolError("bad output layout")
    return value


def _return_type(name, items):
    """torch's own structseq type of that name, never anything the runner defined, made from
    `items`."""
    import torch.return_types

    cls = getattr(torch.return_types, name, None) if type(name) is str else None
    if not isinstance(cls, type) or not issubclass(cls, tuple) or \
            cls.__module__ != "torch.return_types":
        raise ProtocolError(f"no torch.return_types.{str(name)[:100]}")
    try:
        return cls(items)
    except TypeError as exc:
        raise ProtocolError(f"bad torch.return_types.{name}: {exc}") from None


_NAMED_TUPLES: dict = {}


def named_tuple_type(name, fields):
    """A named tuple type made here from checked identifiers (the runner's class is never
    rebuilt), one per name and field list."""
    import collections

    fields = tuple(fields) if isinstance(fields, list) else None
    if not _valid_named_tuple(name, fields):
        raise ProtocolError("bad named tuple in the output layout")
    key = (name, fields)
    if key not in _NAMED_TUPLES:
        _NAMED_TUPLES[key] = collections.namedtuple(name, fields)
    cls = _NAMED_TUPLES[key]

    def make(*items):
        if len(items) != len(fields):
            raise ProtocolError(f"named tuple {name} with {len(items)} items for {len(fields)} fields")
        return cls(*items)

    return make
