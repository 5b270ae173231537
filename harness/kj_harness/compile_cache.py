"""The compile cache of one run (docs/sandbox.md, "Compile cache").

The judge keeps what Triton and torch's extension builder (torch.utils.cpp_extension, e.g.
load_inline) compiled in earlier runs of the same scope (one per user), and gives it to the run
as one read-only file. `restore` puts it where those compilers look, before any submission code
runs; `collect` gathers what this run compiled anew, for the judge to keep. Only the judge writes
the cache: what is collected here is a report, checked and stored by it under this run's scope,
so a run can reach no other user's later runs.

A file is {"path", "mtime_ns", "executable", "data" (base64)}. Modification times are kept
exactly: ninja, which builds torch extensions, rebuilds an output whose recorded time is older
than an input's, so a restored build directory must look as it was left.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
from stat import S_ISDIR, S_ISREG

CACHE_FILE = "/kj/cache/entries.json"
# Cache name -> the environment variable naming where the compiler keeps it (set by the judge).
ROOTS = {"triton": "TRITON_CACHE_DIR", "torch_extensions": "TORCH_EXTENSIONS_DIR"}
FINGERPRINT = ".kj-fingerprint"  # in each torch extension's directory: what built it
MAX_FILE_BYTES = 32 << 20
MAX_COLLECT_BYTES = 48 << 20  # what one run reports, in all (the judge caps it too)


def root_dir(name: str) -> str | None:
    path = os.environ.get(ROOTS[name])
    return path if path and os.path.isabs(path) else None


def skipped(parts: list[str]) -> bool:
    """Files never kept: locks, and the temporary files a compiler left half written."""
    return parts[-1] == "lock" or any(part.startswith("tmp.") or part.endswith(".tmp")
                                      for part in parts)


def command_line(*argv: str) -> str:
    if shutil.which(argv[0]) is None:
        return ""
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    lines = [line for line in out.splitlines() if line.strip()]
    return lines[-1] if argv[0] == "nvcc" and lines else (lines[0] if lines else "")


_fingerprint: str | None = None


def fingerprint() -> str:
    """What a torch extension's build depends on besides its sources and flags (which ninja
    checks itself): Python, torch, and the compilers. Triton's own keys include its versions."""
    global _fingerprint
    if _fingerprint is None:
        import torch
        facts = {"python": sys.version, "torch": torch.__version__, "cuda": torch.version.cuda,
                 "c++": command_line("c++", "--version"), "nvcc": command_line("nvcc", "--version")}
        _fingerprint = hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()
    return _fingerprint


def restore(path: str = CACHE_FILE) -> dict:
    """Writes the given entries under the compilers' cache directories. Returns what was
    restored, by relative path -> (size, mtime_ns), and counts for the report."""
    restored: dict[str, tuple[int, int]] = {}
    summary = {"offered": 0, "restored": 0, "stale": 0}
    try:
        with open(path, encoding="utf-8") as f:
            entries = json.load(f)
    except FileNotFoundError:
        return {"files": restored, **summary}
    files = entries.get("files", []) if isinstance(entries, dict) else []
    summary["offered"] = len(files)
    by_extension: dict[str, str] = {}
    for item in files:
        parts = str(item.get("path", "")).split("/")
        if len(parts) == 3 and parts[0] == "torch_extensions" and parts[-1] == FINGERPRINT:
            by_extension[parts[1]] = base64.b64decode(item.get("data", "")).decode(errors="replace")
    for item in files:
        relative = str(item.get("path", ""))
        parts = relative.split("/")
        if (len(parts) < 3 or parts[0] not in ROOTS or any(p in ("", ".", "..") for p in parts)
                or root_dir(parts[0]) is None):
            continue
        if parts[0] == "torch_extensions" and parts[-1] == FINGERPRINT:
            continue  # read above; a report gives it again
        if parts[0] == "torch_extensions" and by_extension.get(parts[1]) != fingerprint():
            summary["stale"] += 1  # built by another torch or compiler: built again
            continue
        target = os.path.join(root_dir(parts[0]), *parts[1:])
        data = base64.b64decode(item.get("data", ""))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as out:
            out.write(data)
        os.chmod(target, 0o755 if item.get("executable") else 0o644)
        mtime_ns = int(item.get("mtime_ns", 0))
        os.utime(target, ns=(mtime_ns, mtime_ns))
        restored[relative] = (len(data), mtime_ns)
        summary["restored"] += 1
    return {"files": restored, **summary}


TOO_LARGE = object()  # read_plain_file: the file is over MAX_FILE_BYTES


def own_directory_device(root: str) -> int | None:
    """The device of `root` if it is a directory, not a link, on its parent's file system (the
    run's /tmp): submission code may have replaced it with a link to /proc or elsewhere."""
    try:
        here, parent = os.lstat(root), os.lstat(os.path.dirname(root))
    except OSError:
        return None
    if not S_ISDIR(here.st_mode) or here.st_dev != parent.st_dev:
        return None
    return here.st_dev


UNCHANGED = object()  # read_plain_file: the file is as the restore left it


def read_plain_file(path: str, device: int, restored: tuple[int, int] | None = None):
    """(stat, content) of a regular file on the cache's own file system, opened without
    following a link: the directories were written by submission code, which may still swap a
    file for a link (to /proc/self/..., a pipe) between the listing and the read. None for
    anything else; content UNCHANGED when its size and modification time are `restored` (not
    read: a cache hit reads nothing back), TOO_LARGE over MAX_FILE_BYTES."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        stat = os.fstat(fd)
        if not S_ISREG(stat.st_mode) or stat.st_dev != device:
            return None
        if restored == (stat.st_size, stat.st_mtime_ns):
            return stat, UNCHANGED
        if stat.st_size > MAX_FILE_BYTES:
            return stat, TOO_LARGE
        chunks, left = [], stat.st_size
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return stat, b"".join(chunks)
    finally:
        os.close(fd)


def collect(restored: dict[str, tuple[int, int]]) -> dict:
    """The files this run wrote or changed in the compilers' cache directories, as the report
    the judge stores (each torch extension with the fingerprint of what built it)."""
    found: list[dict] = []
    total = 0
    refused = 0
    fingerprints: set[str] = set()
    for name in ROOTS:
        root = root_dir(name)
        device = own_directory_device(root) if root is not None else None
        if device is None:
            continue
        for directory, dirs, names in os.walk(root):
            dirs.sort()
            for file_name in sorted(names):
                full = os.path.join(directory, file_name)
                parts = [name, *os.path.relpath(full, root).split(os.sep)]
                if len(parts) < 3 or skipped(parts) or parts[-1] == FINGERPRINT:
                    continue
                relative = "/".join(parts)
                data = read_plain_file(full, device, restored.get(relative))
                if data is None or data[1] is UNCHANGED:
                    continue
                stat, data = data
                if data is TOO_LARGE or total + stat.st_size > MAX_COLLECT_BYTES:
                    refused += 1
                    continue
                total += len(data)
                found.append({"path": relative, "mtime_ns": stat.st_mtime_ns,
                              "executable": bool(stat.st_mode & 0o111),
                              "data": base64.b64encode(data).decode()})
                if name == "torch_extensions":
                    fingerprints.add(parts[1])
    for extension in sorted(fingerprints):
        found.append({"path": f"torch_extensions/{extension}/{FINGERPRINT}", "mtime_ns": 0,
                      "executable": False,
                      "data": base64.b64encode(fingerprint().encode()).decode()})
    return {"files": found, "bytes": total, "too_large": refused}
