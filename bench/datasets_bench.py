"""Times kj import/export of kernelbot-data on a generated dataset, against plain pyarrow.

Generates ROWS submissions in the published submission-level layout (code of a few KB per row,
like GPUMODE/kernelbot-data: ~1.4 GB for ~198k rows in the NVFP4 file, i.e. ~7 KB per row before
compression), then times, after a warm-up of the page cache:
  kj import kernelbot (fresh SQLite store), kj export kernelbot (submission layout),
  kj export kernelbot --layout run, and a pyarrow script doing the same file work in Python:
  read the parquet, dedup (fastest per user, code, GPU) with pyarrow, write the two files.
Each step prints its wall time and its CPU time (user + sys of the processes it ran; for the
pyarrow script, of this process), the steadier figure on a shared machine.

  $KJ_PYTHON bench/datasets_bench.py --kj build/kj [--rows 200000] [--work DIR] [--repeat N]

With --work DIR the generated files are kept there and reused by the next run with the same
--rows (generating 200,000 rows takes minutes).
"""

import argparse
import os
import random
import shutil
import subprocess
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

LINES = [
    "import torch", "import triton", "import triton.language as tl", "",
    "@triton.jit", "def {name}_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):",
    "    pid = tl.program_id(axis=0)", "    offs = pid * BLOCK + tl.arange(0, BLOCK)",
    "    mask = offs < n", "    x = tl.load(x_ptr + offs, mask=mask, other=0.0)",
    "    y = tl.load(y_ptr + offs, mask=mask, other={k}.0)",
    "    acc = tl.zeros((BLOCK,), dtype=tl.float32) + x * {k} + y",
    "    tl.store(out_ptr + offs, acc, mask=mask)", "",
    "def custom_kernel(data):", "    x, y = data", "    out = torch.empty_like(x)",
    "    grid = (triton.cdiv(x.numel(), {block}),)",
    "    {name}_kernel[grid](x, y, out, x.numel(), BLOCK={block})", "    return out",
    "# tuning note {k}: tried BLOCK={block} num_warps={warps} on shape {k}x{block}",
]


def make_code(rng, i):
    name = f"k{i}_{rng.randrange(1 << 30):x}"
    parts = []
    target = rng.randrange(2000, 6000)  # bytes
    while sum(map(len, parts)) < target:
        line = rng.choice(LINES)
        parts.append(line.format(name=name, k=rng.randrange(1000), block=rng.choice([128, 256, 512, 1024]),
                                 warps=rng.choice([2, 4, 8])))
    return "\n".join(parts) + "\n"


def generate(out_dir, rows):
    rng = random.Random(7)
    problems = ["nvfp4_gemv", "nvfp4_gemm", "nvfp4_dual_gemm", "nvfp4_group_gemm"]
    users = [f"user{u}" for u in range(600)]
    start = datetime(2025, 11, 1, tzinfo=timezone.utc)
    codes = [make_code(rng, i) for i in range(rows)]
    # about one row in ten resubmits an earlier code (dedup has work to do)
    for i in range(rows):
        if i and rng.random() < 0.1:
            codes[i] = codes[rng.randrange(i)]
    table = pa.table({
        "submission_id": pa.array(range(1, rows + 1), pa.int64()),
        "leaderboard_id": pa.array([rng.randrange(4) + 1 for _ in range(rows)], pa.int64()),
        "problem_name": [None] * rows,
        "user_id": [None] * rows,
        "user_name": [rng.choice(users) for _ in range(rows)],
        "code_id": pa.array(range(1, rows + 1), pa.int64()),
        "file_name": ["submission.py"] * rows,
        "submission_time": pa.array([start + timedelta(seconds=7 * i) for i in range(rows)],
                                    pa.timestamp("us", tz="UTC")),
        "status": [None] * rows,
        "score": [None] * rows,
        "passed": [None] * rows,
        "mode": ["leaderboard"] * rows,
        "runner": ["B200"] * rows,
        "code": codes,
    })
    lb = table.column("leaderboard_id").to_pylist()
    ok = [rng.random() < 0.8 for _ in range(rows)]
    table = table.set_column(2, "problem_name", pa.array([problems[i - 1] for i in lb]))
    table = table.set_column(3, "user_id", pa.array([n[4:] for n in table.column("user_name").to_pylist()]))
    table = table.set_column(8, "status", pa.array(["succeeded" if o else "failed" for o in ok]))
    table = table.set_column(9, "score", pa.array([rng.uniform(5e-6, 5e-4) if o else None for o in ok],
                                                  pa.float64()))
    table = table.set_column(10, "passed", pa.array(ok))
    pq.write_table(table, out_dir / "submissions.parquet")
    pq.write_table(pa.table({
        "id": pa.array([1, 2, 3, 4], pa.int64()), "name": problems,
        "deadline": pa.array([start] * 4, pa.timestamp("us", tz="UTC")),
        "lang": ["py"] * 4, "description": [""] * 4, "reference": [""] * 4,
        "gpu_types": [["B200"]] * 4,
    }), out_dir / "leaderboards.parquet")


def cpu_children():
    t = os.times()
    return t.children_user, t.children_system


def cpu_self():
    t = os.times()
    return t.user, t.system


def report(what, wall, cpu0, cpu1, note):
    user, system = cpu1[0] - cpu0[0], cpu1[1] - cpu0[1]
    print(f"{what:<34} {wall:7.2f} s wall  {user + system:6.2f} s CPU ({user:.2f} user + "
          f"{system:.2f} sys)   {note}", flush=True)


def timed(what, argv):
    c0 = cpu_children()
    t0 = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"{what} failed: {p.stderr}")
    report(what, dt, c0, cpu_children(), p.stdout.strip())
    return dt


def pyarrow_baseline(src, out_dir):
    """The same file work in a pyarrow script: read, dedup, write both files."""
    c0 = cpu_self()
    t0 = time.perf_counter()
    table = pq.read_table(src)
    read = time.perf_counter() - t0
    c_read = cpu_self()
    # fastest per (leaderboard, user, code, GPU): sort, then keep each group's first row
    keyed = table.append_column("key", pc.binary_join_element_wise(
        pc.cast(table["leaderboard_id"], pa.string()), table["user_name"],
        pc.cast(pc.binary_length(table["code"]), pa.string()), table["code"], table["runner"], "\x1f"))
    keyed = keyed.sort_by([("key", "ascending"), ("score", "ascending")])
    keys = keyed["key"].combine_chunks()
    first = pc.not_equal(keys, pa.concat_arrays([pa.array([None], pa.string()), keys[:-1]]))
    first = pc.fill_null(first, True)
    kept = keyed.filter(first).drop_columns(["key"]).sort_by("submission_id")
    pq.write_table(kept, out_dir / "submissions.parquet")
    pq.write_table(kept.filter(kept["passed"]), out_dir / "successful_submissions.parquet")
    total = time.perf_counter() - t0
    report("pyarrow script: read", read, c0, c_read, f"{table.num_rows} rows")
    report("pyarrow script: read+dedup+write", total, c0, cpu_self(), f"{kept.num_rows} rows kept")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kj", required=True)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--work", help="folder for the files, kept (default: a temporary one)")
    parser.add_argument("--repeat", type=int, default=1, help="times each step is run")
    args = parser.parse_args()
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="kj-datasets-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        src = work / "published"
        src.mkdir(exist_ok=True)
        t0 = time.perf_counter()
        made = src / "submissions.parquet"
        if made.exists() and pq.ParquetFile(made).metadata.num_rows == args.rows:
            print(f"reusing {made}")
        else:
            generate(src, args.rows)
        size = (src / "submissions.parquet").stat().st_size
        code_bytes = pq.read_table(src / "submissions.parquet", columns=["code"])["code"]
        mean_code = pc.sum(pc.binary_length(code_bytes)).as_py() / args.rows
        print(f"{args.rows} rows ready in {time.perf_counter() - t0:.1f} s: "
              f"{size / 2**20:.0f} MiB parquet, mean code {mean_code / 1024:.1f} KiB")
        db = work / "bench.db"
        files = [src / "submissions.parquet", src / "leaderboards.parquet"]
        pq.read_table(files[0])  # page cache
        (work / "baseline").mkdir(exist_ok=True)
        for _ in range(args.repeat):
            for f in work.glob("bench.db*"):
                f.unlink()
            with open("/proc/loadavg") as f:
                print(f"load average {' '.join(f.read().split()[:3])}")
            timed("kj import kernelbot", [args.kj, "import", "kernelbot", *files, "--db", f"sqlite:{db}"])
            timed("kj import kernelbot (again)",
                  [args.kj, "import", "kernelbot", *files, "--db", f"sqlite:{db}"])
            timed("kj export kernelbot", [args.kj, "export", "kernelbot", "--out", work / "export",
                                          "--db", f"sqlite:{db}"])
            timed("kj export kernelbot --layout run",
                  [args.kj, "export", "kernelbot", "--layout", "run", "--out", work / "export_runs",
                   "--db", f"sqlite:{db}"])
            pyarrow_baseline(files[0], work / "baseline")
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
