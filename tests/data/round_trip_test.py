"""kj import kernelbot -> kj export kernelbot gives back the published files: the same ids
(submissions, leaderboards, users, code) and the same rows, code byte for byte.

A kernelbot-data set is written here in the published schema (the submission layout, as in the
per-competition files, and leaderboards.parquet) with ids a fresh store would not hand out
(1001, 595, Discord-like user ids). Imported into a fresh store and exported, every row comes
back as it was. Imported again, nothing is added. Imported into a store that already holds
submissions, code and a leaderboard under those very ids (another published set), the ids are
kept through the source-id table: exporting the set's leaderboards gives back the set, and the
other set's rows are untouched. A run-level file as the AMD release has it (kernelbot's own
run_meta, anonymized user ids) comes back as it was too.

Run with the harness interpreter (it has pyarrow):
  $KJ_PYTHON tests/data/round_trip_test.py --kj build/kj
"""

import sqlite3
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from kernelbot_fixture import PUBLISHED_SUBMISSION_SCHEMA, check, kj_argument, report

# leaderboards.parquet as an export writes it (and as the card lists it).
PUBLISHED_LEADERBOARD_SCHEMA = pa.schema([
    ("id", pa.int64()), ("name", pa.large_string()), ("deadline", pa.timestamp("us", tz="UTC")),
    ("lang", pa.large_string()), ("description", pa.large_string()),
    ("reference", pa.large_string()), ("gpu_types", pa.list_(pa.string())),
])


def t(day, second):
    return datetime(2025, 11, day, 9, 0, second, 123456, tzinfo=timezone.utc)


# Code whose bytes an import or export could change if it were careless: non-ASCII text, CRLF
# line ends, tabs, trailing blanks, a NUL byte, no final newline.
CODES = {
    77: "import torch\n\ndef custom_kernel(data):\n    return data[0] @ data[1]\n",
    78: "# gemv — naïve, 🚀\r\nimport torch\r\ndef custom_kernel(data):\r\n\treturn data[0] @ data[1]  \r\n",
    80: "import triton\nimport triton.language as tl\n# \x00 a NUL byte\ndef custom_kernel(d):\n    return d",
    91: "def custom_kernel(data):\n    a, b = data\n    return (a * b).sum(-1)\n",
    92: "def custom_kernel(data):\n    a, b = data\n    return torch.einsum('ij,j->i', a, b)\n",
}

# (submission_id, leaderboard_id, user_id, user_name, code_id, time, status, score, passed, mode, runner)
SET = [
    (1001, 595, "1169453225871634432", "ana", 77, t(3, 1), "succeeded", 4.25e-5, True, "leaderboard", "B200"),
    (1002, 595, "1169453225871634432", "ana", 78, t(3, 2), "failed", None, False, "leaderboard", "B200"),
    (1005, 595, "882736472983741", "ben", 77, t(3, 5), "succeeded", 3.5e-5, True, "leaderboard", "B200"),
    (1006, 595, "882736472983741", "ben", 80, t(4, 1), "succeeded", None, True, "test", "B200"),
    (1010, 595, "882736472983741", "ben", 78, t(4, 7), "hacked", None, True, "leaderboard", "B200"),
    (1011, 595, "1169453225871634432", "ana", 80, t(4, 9), "timed_out", None, False, "benchmark", "B200"),
    (2040, 596, "882736472983741", "ben", 91, t(5, 0), "succeeded", 1.25e-3, True, "leaderboard", "H100"),
    (2041, 596, "1169453225871634432", "ana", 92, t(5, 3), "succeeded", 9.5e-4, True, "leaderboard", "A100"),
    (2043, 596, "1169453225871634432", "ana", 92, t(5, 4), "succeeded", 9.0e-4, True, "leaderboard", "H100"),
]
LEADERBOARDS = [
    (595, "nvfp4_gemv", t(20, 0), "py", "NVFP4 matrix-vector product",
     "import torch\n\ndef ref_kernel(data):\n    return data[0] @ data[1]\n", ["B200"]),
    (596, "trimul", t(21, 0), "py", "Triangle multiplicative update",
     "def ref_kernel(data):\n    ...\n", ["A100", "H100"]),
]


# The AMD release's run level (one row per public run), as an export writes it.
PUBLISHED_RUN_SCHEMA = pa.schema([
    ("submission_id", pa.int64()), ("leaderboard_id", pa.int64()), ("user_id", pa.int64()),
    ("submission_time", pa.timestamp("us", tz="UTC")), ("file_name", pa.large_string()),
    ("code", pa.large_string()), ("code_id", pa.int64()), ("run_id", pa.int64()),
    ("run_start_time", pa.timestamp("us", tz="UTC")), ("run_end_time", pa.timestamp("us", tz="UTC")),
    ("run_mode", pa.large_string()), ("run_score", pa.float64()), ("run_passed", pa.bool_()),
    ("run_result", pa.large_string()), ("run_compilation", pa.large_string()),
    ("run_meta", pa.large_string()), ("run_system_info", pa.large_string()),
])


def run_rows():
    """Runs as kernelbot's database recorded them: its own run_meta (no GPU in it), a test and a
    leaderboard run per submission, anonymized user ids."""
    rows = []
    for k, (sid, uid, code_id, passed) in enumerate([(40001, 3, 501, True), (40007, 1, 502, True),
                                                     (40012, 3, 503, False)]):
        for j, mode in enumerate(["test", "leaderboard"]):
            ok = passed or mode == "test"
            rows.append({
                "submission_id": sid, "leaderboard_id": 763, "user_id": uid,
                "submission_time": t(6, k), "file_name": "fp8_mm.py",
                "code": CODES[[77, 78, 80][k]] + f"# {code_id}\n", "code_id": code_id,
                "run_id": 90000 + 10 * k + j, "run_start_time": t(6, 10 + 2 * k + j),
                "run_end_time": t(6, 20 + 2 * k + j), "run_mode": mode,
                "run_score": 1.5e-4 / (k + 1) if mode == "leaderboard" and ok else None,
                "run_passed": ok,
                "run_result": '{"check": "pass", "benchmark-count": "1"}' if ok else '{"check": "fail"}',
                "run_compilation": "{}",
                "run_meta": '{"stdout": "ok\\n", "stderr": "", "success": true, "exit_code": 0, '
                            f'"command": "python eval.py {mode}", "duration": {12.5 + k}}}',
                "run_system_info": '{"gpu": "AMD Instinct MI300X", "device_count": 8}',
            })
    return pa.Table.from_pylist(rows, schema=PUBLISHED_RUN_SCHEMA)


def submissions_table(rows, codes, problem_names):
    return pa.table({
        "submission_id": [r[0] for r in rows], "leaderboard_id": [r[1] for r in rows],
        "problem_name": [problem_names[r[1]] for r in rows],
        "user_id": [r[2] for r in rows], "user_name": [r[3] for r in rows],
        "code_id": [r[4] for r in rows], "file_name": ["submission.py"] * len(rows),
        "submission_time": [r[5] for r in rows], "status": [r[6] for r in rows],
        "score": [r[7] for r in rows], "passed": [r[8] for r in rows], "mode": [r[9] for r in rows],
        "runner": [r[10] for r in rows], "code": [codes[r[4]] for r in rows],
    }, schema=PUBLISHED_SUBMISSION_SCHEMA)


def leaderboards_table(rows):
    return pa.table({name: [r[i] for r in rows]
                     for i, name in enumerate(PUBLISHED_LEADERBOARD_SCHEMA.names)},
                    schema=PUBLISHED_LEADERBOARD_SCHEMA)


def write_set(dir_, rows, codes, leaderboards):
    """A published set: submissions.parquet and leaderboards.parquet; returns the two tables."""
    dir_.mkdir()
    names = {l[0]: l[1] for l in leaderboards}
    tables = submissions_table(rows, codes, names), leaderboards_table(leaderboards)
    pq.write_table(tables[0], dir_ / "submissions.parquet")
    pq.write_table(tables[1], dir_ / "leaderboards.parquet")
    return tables


def run_kj(kj, *args):
    p = subprocess.run([kj, *map(str, args)], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError(f"kj {' '.join(map(str, args))} exited {p.returncode}: {p.stderr}")
    return p.stdout


def exported(dir_, config, key):
    files = sorted((dir_ / "data" / config).glob("train-*.parquet"))
    return pa.concat_tables([pq.read_table(f) for f in files]).sort_by(key)


def first_difference(a, b):
    """The first row (as dicts) where two tables differ, for the failure message."""
    if a.schema != b.schema:
        return f"schemas differ:\n{a.schema}\nvs\n{b.schema}"
    if a.num_rows != b.num_rows:
        return f"{a.num_rows} rows vs {b.num_rows}"
    for x, y in zip(a.to_pylist(), b.to_pylist()):
        if x != y:
            return f"{x}\nvs\n{y}"
    return "no difference"


def same_rows(what, got, want):
    same = got.equals(want)
    check(same, f"{what}: the input's ids and rows, code byte for byte"
          + ("" if same else f"\n  first difference: {first_difference(got, want)}"))


def check_reproduces(kj, db, out, want_submissions, want_leaderboards, what, *selection):
    run_kj(kj, "export", "kernelbot", "--out", out, "--db", db, *selection)
    same_rows(f"{what}: submissions", exported(out, "submissions", "submission_id"),
              want_submissions.sort_by("submission_id"))
    same_rows(f"{what}: leaderboards", exported(out, "leaderboards", "id"),
              want_leaderboards.sort_by("id"))


def main():
    kj = kj_argument()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        subs, boards = write_set(tmp / "published", SET, CODES, LEADERBOARDS)
        files = [tmp / "published" / "submissions.parquet", tmp / "published" / "leaderboards.parquet"]

        # --- a fresh store ---------------------------------------------------------------------
        db_path = tmp / "fresh.db"
        db = f"sqlite:{db_path}"
        out = run_kj(kj, "import", "kernelbot", *files, "--db", db)
        check("9 submissions and 2 leaderboards added" in out, f"import: {out.strip()}")
        with sqlite3.connect(db_path) as c:
            ids = [r[0] for r in c.execute("SELECT id FROM submissions ORDER BY id")]
            boards_stored = [r[0] for r in c.execute("SELECT id FROM leaderboards ORDER BY id")]
        check(ids == [r[0] for r in SET] and boards_stored == [595, 596],
              f"a fresh store keeps the published ids as its own: {ids}, {boards_stored}")
        check_reproduces(kj, db, tmp / "fresh_export", subs, boards, "fresh store")

        out = run_kj(kj, "import", "kernelbot", *files, "--db", db)
        check("0 submissions and 0 leaderboards added" in out,
              f"the same files again add nothing: {out.strip()}")
        check_reproduces(kj, db, tmp / "again_export", subs, boards, "imported twice")

        # --- a store that has rows under the set's ids ------------------------------------------
        # Another published set whose submission, code and leaderboard ids are the set's own
        # (different people, code and leaderboard).
        other_codes = {code_id: f"# another competition's code {code_id}\n" for code_id in CODES}
        other_rows = [(sid, 595, "7" + uid[1:], {"ana": "cleo", "ben": "dev"}[name], code_id,
                       time, "succeeded", 2.0e-5, True, "leaderboard", "MI300")
                      for sid, _, uid, name, code_id, time, *_ in SET]
        other_rows = list({(r[3], r[4]): r for r in other_rows}.values())  # published sets are deduplicated
        other_boards = [(595, "amd_fp8_mm", t(22, 0), "py", "FP8 GEMM", "def ref_kernel(d): ...\n",
                         ["MI300"])]
        other_subs, other_lb = write_set(tmp / "other", other_rows, other_codes, other_boards)
        db_path = tmp / "taken.db"
        db = f"sqlite:{db_path}"
        run_kj(kj, "import", "kernelbot", tmp / "other" / "submissions.parquet",
               tmp / "other" / "leaderboards.parquet", "--db", db)
        out = run_kj(kj, "import", "kernelbot", *files, "--db", db)
        check("9 submissions and 2 leaderboards added" in out, f"import beside them: {out.strip()}")
        with sqlite3.connect(db_path) as c:
            mapped = dict(((kind, source), local) for kind, local, source in
                          c.execute("SELECT kind, local_id, source_id FROM source_ids"))
            owner_1001 = c.execute("SELECT u.name FROM submissions s JOIN users u ON "
                                   "u.id = s.user_id WHERE s.id = 1001").fetchone()
        taken = {r[0] for r in other_rows}
        check(all(("submission", str(sid)) in mapped for sid in taken) and
              ("leaderboard", "595") in mapped and ("code", "77") in mapped,
              f"ids already taken are recorded as source ids: {sorted(mapped)}")
        check(owner_1001 == ("cleo",), f"submission 1001 of the store is still cleo's: {owner_1001}")
        check_reproduces(kj, db, tmp / "taken_export", subs, boards, "ids taken before",
                         "--leaderboard", "nvfp4_gemv", "--leaderboard", "trimul")
        check_reproduces(kj, db, tmp / "other_export", other_subs, other_lb,
                         "the rows that held the ids first", "--leaderboard", "amd_fp8_mm")
        out = run_kj(kj, "import", "kernelbot", *files, "--db", db)
        check("0 submissions and 0 leaderboards added" in out,
              f"imported again beside them, nothing added: {out.strip()}")

        # --- the run level (the AMD release's submissions.parquet) -------------------------------
        runs_dir = tmp / "runs"
        runs_dir.mkdir()
        runs = run_rows()
        amd = leaderboards_table([(763, "amd-fp8-mm", t(25, 0), "py", "FP8 GEMM on MI300",
                                   "def ref_kernel(data): ...\n", ["MI300"])])
        pq.write_table(runs, runs_dir / "submissions.parquet")
        pq.write_table(amd, runs_dir / "leaderboards.parquet")
        db = f"sqlite:{tmp / 'runs.db'}"
        out = run_kj(kj, "import", "kernelbot", runs_dir / "submissions.parquet",
                     runs_dir / "leaderboards.parquet", "--db", db)
        check("3 submissions and 1 leaderboards added" in out, f"run-level import: {out.strip()}")
        run_kj(kj, "export", "kernelbot", "--layout", "run", "--out", tmp / "runs_export", "--db", db)
        same_rows("run level: runs", exported(tmp / "runs_export", "submissions", "run_id"),
                  runs.sort_by("run_id"))
        same_rows("run level: leaderboards", exported(tmp / "runs_export", "leaderboards", "id"), amd)


if __name__ == "__main__":
    main()
    sys.exit(report())
