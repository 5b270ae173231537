"""Device-side hand-over of kept outputs from the runner to the harness (CUDA IPC).

A re-check of timed outputs used to copy each one to the host, through the pipe and back to the
device: gigabytes per benchmark. Instead the runner sends, for each CUDA tensor, an IPC handle of
the allocation that holds it and the tensor's offset in it (driver API, legacy IPC: the two
processes are one sandbox's parent and forked child). The harness opens the handle, checks that
the tensor lies inside what it mapped, copies the bytes into memory of its own and closes the
handle before it reads anything: from then on nothing the runner does reaches what is checked.
The runner could hand over any bytes it likes either way; what the harness must never do is read
outside the mapping (that would fault its context), run anything the runner sent, or be left
without an answer: when IPC fails anywhere, the harness asks for the same outputs through the
pipe.
"""

from __future__ import annotations

import ctypes

HANDLE_BYTES = 64


class _Handle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * HANDLE_BYTES)]


class IpcUnavailable(Exception):
    """CUDA IPC cannot be used here (no driver, memory not exportable, a handle not openable)."""


_driver = None


def _cuda():
    global _driver
    if _driver is None:
        try:
            _driver = ctypes.CDLL("libcuda.so.1")
        except OSError as exc:
            raise IpcUnavailable(f"no CUDA driver: {exc}") from None
    return _driver


def _function(name: str):
    lib = _cuda()
    for symbol in (name + "_v2", name):
        fn = getattr(lib, symbol, None)
        if fn is not None:
            return fn
    raise IpcUnavailable(f"the driver has no {name}")


def _address_range(ptr: int) -> tuple[int, int]:
    base, size = ctypes.c_uint64(), ctypes.c_size_t()
    rc = _function("cuMemGetAddressRange")(ctypes.byref(base), ctypes.byref(size), ctypes.c_uint64(ptr))
    if rc != 0:
        raise IpcUnavailable(f"cuMemGetAddressRange failed ({rc})")
    return base.value, size.value


def export(tensor) -> dict:
    """Runner side: the handle of the allocation holding `tensor` (contiguous, on a GPU) and its
    offset there. The caller keeps the tensor alive until the harness has copied it."""
    if tensor.numel() == 0:
        return {"handle": "", "offset": 0}
    ptr = tensor.data_ptr()
    base, size = _address_range(ptr)
    handle = _Handle()
    rc = _function("cuIpcGetMemHandle")(ctypes.byref(handle), ctypes.c_uint64(base))
    if rc != 0:
        raise IpcUnavailable(f"cuIpcGetMemHandle failed ({rc})")
    return {"handle": ctypes.string_at(ctypes.addressof(handle), HANDLE_BYTES).hex(),
            "offset": ptr - base}


class _Array:
    """Device bytes [ptr, ptr + nbytes) as a CUDA array interface, for torch.as_tensor."""

    def __init__(self, ptr: int, nbytes: int):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1",
                                         "data": (ptr, False), "version": 2}


class Opened:
    """Harness side: handles opened once each, closed on exit."""

    def __init__(self, device: str):
        self.device = device
        self.mapped: dict[str, tuple[int, int]] = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        close = _function("cuIpcCloseMemHandle") if self.mapped else None
        for ptr, _ in self.mapped.values():
            close(ctypes.c_uint64(ptr))
        self.mapped.clear()

    def _open(self, handle_hex: str) -> tuple[int, int]:
        if handle_hex in self.mapped:
            return self.mapped[handle_hex]
        try:
            raw = bytes.fromhex(handle_hex)
        except ValueError:
            raw = b""
        if len(raw) != HANDLE_BYTES:
            raise ValueError("a malformed IPC handle")
        handle = _Handle()
        ctypes.memmove(ctypes.addressof(handle), raw, HANDLE_BYTES)
        ptr = ctypes.c_uint64()
        lazy_enable_peer_access = 1
        rc = _function("cuIpcOpenMemHandle")(ctypes.byref(ptr), handle,
                                             ctypes.c_uint(lazy_enable_peer_access))
        if rc != 0:
            raise IpcUnavailable(f"cuIpcOpenMemHandle failed ({rc})")
        base, size = _address_range(ptr.value)
        self.mapped[handle_hex] = (ptr.value, size - (ptr.value - base))
        return self.mapped[handle_hex]

    def copy(self, handle_hex: str, offset: int, nbytes: int):
        """The bytes at `offset` of the allocation behind the handle, as a uint8 tensor of the
        harness's own; ValueError when they do not lie inside the mapping."""
        import torch

        if nbytes == 0:
            return torch.empty(0, dtype=torch.uint8, device=self.device)
        ptr, size = self._open(handle_hex)
        if not (type(offset) is int and 0 <= offset and offset + nbytes <= size):
            raise ValueError("a tensor outside the memory its IPC handle maps")
        view = torch.as_tensor(_Array(ptr + offset, nbytes), device=self.device)
        return view.clone()
