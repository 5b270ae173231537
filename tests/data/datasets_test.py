"""kj export/import/stats on a small hand-made kernelbot-data fixture.

Round trip: fixture -> import -> export -> read back with pandas, pyarrow and Hugging Face
datasets -> import into a fresh store -> export again: the same files, ids included. Bad files:
clear errors, nothing imported. Analysis commands against answers computed by hand for the
fixture below.

Run with the harness interpreter (it has pyarrow, pandas, datasets):
  $KJ_PYTHON tests/data/datasets_test.py --kj build/kj
"""

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from kernelbot_fixture import PUBLISHED_SUBMISSION_SCHEMA, SUBMISSION_SCHEMA, check, kj_argument, report, write_submissions


def t(minute):
    return datetime(2025, 6, 1, 12, minute, tzinfo=timezone.utc)


TRITON = "import torch\nimport triton\nimport triton.language as tl\n# v{}\n"
TORCH = "import torch\n# v{}\n"

# (submission_id, problem, user, code, time, status, score, passed, mode, runner)
ROWS = [
    (101, "vectoradd", "alice", TRITON.format(1), t(1), "succeeded", 3.0e-5, True, "leaderboard", "H100"),
    (102, "vectoradd", "alice", TRITON.format(2), t(2), "succeeded", 2.0e-5, True, "leaderboard", "H100"),
    # the same code as 102 again, slower: dedup keeps 102
    (103, "vectoradd", "alice", TRITON.format(2), t(3), "succeeded", 2.5e-5, True, "leaderboard", "H100"),
    (104, "vectoradd", "alice", TRITON.format(3), t(4), "wrong_answer", None, False, "leaderboard", "H100"),
    (105, "vectoradd", "alice", TRITON.format(4), t(5), "succeeded", 1.0e-5, True, "leaderboard", "H100"),
    (201, "vectoradd", "bob", TORCH.format(1), t(2), "succeeded", 1.5e-5, True, "leaderboard", "H100"),
    (202, "vectoradd", "bob", TORCH.format(2), t(6), "hacked", 1.0e-7, True, "leaderboard", "H100"),
    (203, "vectoradd", "bob", TORCH.format(1), t(7), "succeeded", 4.0e-5, True, "leaderboard", "A100"),
    (301, "vectoradd", "carol", TORCH.format(9), t(8), "succeeded", 1.5e-5, True, "leaderboard", "H100"),
    (302, "vectoradd", "carol", TORCH.format(10), t(9), "failed", None, False, "test", "H100"),
    (401, "grayscale", "alice", TORCH.format(20), t(3), "succeeded", 7.0e-4, True, "leaderboard", "H100"),
]
USER_IDS = {"alice": "9001", "bob": "9002", "carol": "9003"}

RUN_COLUMNS = ["submission_id", "leaderboard_id", "user_id", "submission_time", "file_name", "code",
               "code_id", "run_id", "run_start_time", "run_end_time", "run_mode", "run_score",
               "run_passed", "run_result", "run_compilation", "run_meta", "run_system_info"]
LEADERBOARD_COLUMNS = ["id", "name", "deadline", "lang", "description", "reference", "gpu_types"]


def write_fixture(dir_):
    dir_.mkdir()
    codes = {}
    write_submissions(dir_ / "submissions.parquet", {
        "submission_id": [r[0] for r in ROWS],
        "leaderboard_id": [{"vectoradd": 7, "grayscale": 8}[r[1]] for r in ROWS],
        "problem_name": [r[1] for r in ROWS],
        "user_id": [USER_IDS[r[2]] for r in ROWS],
        "user_name": [r[2] for r in ROWS],
        "code_id": [codes.setdefault(r[3], len(codes) + 1) for r in ROWS],
        "file_name": ["submission.py"] * len(ROWS),
        "submission_time": [r[4] for r in ROWS],
        "status": [r[5] for r in ROWS],
        "score": [r[6] for r in ROWS],
        "passed": [r[7] for r in ROWS],
        "mode": [r[8] for r in ROWS],
        "runner": [r[9] for r in ROWS],
        "code": [r[3] for r in ROWS],
    })
    pq.write_table(pa.table({
        "id": pa.array([7, 8], pa.int64()),
        "name": ["vectoradd", "grayscale"],
        "deadline": pa.array([t(30), t(30)], pa.timestamp("us", tz="UTC")),
        "lang": ["py", "py"],
        "description": ["add two vectors", "RGB to gray"],
        "reference": ["", ""],
        "gpu_types": [["A100", "H100"], ["H100"]],
    }), dir_ / "leaderboards.parquet")


class Kj:
    def __init__(self, kj):
        self.kj = kj

    def run(self, *args, ok=True):
        p = subprocess.run([self.kj, *map(str, args)], capture_output=True, text=True, timeout=120)
        if ok and p.returncode != 0:
            raise AssertionError(f"kj {' '.join(map(str, args))} exited {p.returncode}: {p.stderr}")
        return p

    def json(self, *args):
        return json.loads(self.run(*args, "--json").stdout)


def shards(dir_, config):
    """The data files of one config of an export, in order."""
    return sorted((dir_ / "data" / config).glob("train-*.parquet"))


def read_config(dir_, config):
    return pa.concat_tables([pq.read_table(f) for f in shards(dir_, config)])


def card_yaml(dir_):
    import yaml
    text = (dir_ / "README.md").read_text()
    check(text.startswith("---\n"), f"{dir_.name}: README.md begins with YAML front matter")
    front, _, body = text[4:].partition("\n---\n")
    return yaml.safe_load(front), body


def check_hub_dataset(dir_, configs, cache):
    """What a user of the hub does with an export: the card's YAML, load_dataset on the
    directory (every config) and on the files, concatenation with a file written in the schema
    the card publishes, row groups the viewer reads and a page index."""
    import datasets
    meta, body = card_yaml(dir_)
    listed = [c["config_name"] for c in meta["configs"]]
    check(listed == configs, f"{dir_.name}: the card lists every config: {listed}")
    check(meta["license"] and meta["tags"] and meta["size_categories"] and meta["task_categories"],
          f"{dir_.name}: the card has license, tags, size and task categories")
    infos = {i["config_name"]: i for i in meta["dataset_info"]}
    for config in meta["configs"]:
        name = config["config_name"]
        pattern = config["data_files"][0]["path"]
        files = sorted(dir_.glob(pattern))
        check(files and all(f.name.startswith("train-") for f in files),
              f"{dir_.name}/{name}: data_files {pattern} matches {len(files)} file(s)")
        rows = infos[name]["splits"][0]["num_examples"]
        loaded = datasets.load_dataset(str(dir_), name, split="train", cache_dir=str(cache))
        check(len(loaded) == rows, f"{dir_.name}/{name}: load_dataset(dir, {name!r}) has the "
              f"card's {rows} rows ({len(loaded)})")
        by_files = datasets.load_dataset("parquet", data_files=[str(f) for f in files],
                                         split="train", cache_dir=str(cache))
        check(len(by_files) == rows, f"{dir_.name}/{name}: load_dataset('parquet', data_files=...)")
        features = datasets.Features._from_yaml_list(infos[name]["features"])
        check(loaded.features == features, f"{dir_.name}/{name}: the card's features are the files'")
        published = dir_.parent / f"{dir_.name}-{name}-published.parquet"
        pq.write_table(pa.Table.from_pylist(loaded.select(range(min(1, len(loaded)))).to_list(),
                                            schema=features.arrow_schema), published)
        other = datasets.load_dataset("parquet", data_files=str(published), split="train",
                                      cache_dir=str(cache))
        both = datasets.concatenate_datasets([loaded, other])
        check(len(both) == len(loaded) + len(other),
              f"{dir_.name}/{name}: concatenates with a file written in the card's schema")
        meta_file = pq.ParquetFile(files[0]).metadata
        check(meta_file.num_row_groups == 0 or (
              max(meta_file.row_group(g).num_rows for g in range(meta_file.num_row_groups)) <= 1000
              and meta_file.row_group(0).column(0).has_offset_index
              and meta_file.row_group(0).column(0).has_column_index),
              f"{dir_.name}/{name}: row groups of at most 1000 rows, page index written")
    default = datasets.load_dataset(str(dir_), split="train", cache_dir=str(cache))
    check(len(default) == infos[configs[0]]["splits"][0]["num_examples"],
          f"{dir_.name}: load_dataset(dir) loads the default config {configs[0]}")
    return meta, body


def main():
    kj = Kj(kj_argument())
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        write_fixture(tmp / "fixture")
        db_a = f"sqlite:{tmp / 'a.db'}"
        fixture = [tmp / "fixture" / "submissions.parquet", tmp / "fixture" / "leaderboards.parquet"]

        out = kj.run("import", "kernelbot", *fixture, "--db", db_a).stdout
        check("11 submissions and 2 leaderboards added" in out, f"first import: {out.strip()}")
        out = kj.run("import", "kernelbot", *fixture, "--db", db_a).stdout
        check("0 submissions and 0 leaderboards added" in out, f"second import adds nothing: {out.strip()}")

        # --- analysis, answers by hand -------------------------------------------------------
        # vectoradd: alice best 1.0e-5 (105), 5 submissions; bob best 1.5e-5 (201; 202 hacked),
        # 3 submissions; carol 1.5e-5 (301), 2 submissions. bob and carol tie at rank 2.
        top = kj.json("stats", "top", "--leaderboard", "vectoradd", "--db", db_a)
        check([(e["rank"], e["user"], e["best_score"], e["submissions"]) for e in top] ==
              [(1, "alice", 1.0e-5, 5), (2, "bob", 1.5e-5, 3), (2, "carol", 1.5e-5, 2)],
              f"stats top vectoradd: {top}")
        top = kj.json("stats", "top", "--leaderboard", "vectoradd", "--gpu", "A100", "--db", db_a)
        check([(e["user"], e["best_score"], e["submissions"]) for e in top] == [("bob", 4.0e-5, 1)],
              "stats top --gpu A100: bob alone")
        top = kj.json("stats", "top", "--leaderboard", "vectoradd", "-n", "1", "--db", db_a)
        check(len(top) == 1 and top[0]["user"] == "alice", "stats top -n 1")
        text = kj.run("stats", "top", "--leaderboard", "vectoradd", "--db", db_a).stdout
        check("alice" in text and "10 µs" in text, "stats top as text shows µs")
        svg = tmp / "alice.svg"
        prog = kj.json("stats", "progression", "--user", "alice", "--leaderboard", "vectoradd",
                       "--db", db_a, "--plot", svg)
        check([p["score"] for p in prog] == [3.0e-5, 2.0e-5, 2.5e-5, None, 1.0e-5],
              f"progression scores: {[p['score'] for p in prog]}")
        check([p["best_so_far"] for p in prog] == [3.0e-5, 2.0e-5, 2.0e-5, 2.0e-5, 1.0e-5],
              "progression best so far")
        svg_text = svg.read_text()
        check(svg_text.startswith("<svg") and svg_text.count('class="score"') == 4,
              "progression SVG: one dot per scored submission")
        summary = {r["leaderboard"]: r for r in kj.json("stats", "summary", "--db", db_a)}
        check((summary["vectoradd"]["submissions"], summary["vectoradd"]["users"],
               summary["vectoradd"]["scored"], summary["vectoradd"]["best_score"]) == (10, 3, 7, 1.0e-5),
              f"summary vectoradd: {summary['vectoradd']}")
        check(summary["grayscale"]["submissions"] == 1, "summary grayscale")
        bad = kj.run("stats", "top", "--leaderboard", "nope", "--db", db_a, ok=False)
        check(bad.returncode == 2 and "no leaderboard named 'nope'" in bad.stderr,
              "stats on an unknown leaderboard: clear error")

        # --- export, read back three ways ------------------------------------------------------
        dir_a = tmp / "export_a"
        kj.run("export", "kernelbot", "--out", dir_a, "--db", db_a, "--license", "cc-by-4.0")
        sub = read_config(dir_a, "submissions")
        check(sub.schema.equals(PUBLISHED_SUBMISSION_SCHEMA), f"submission layout schema: {sub.schema}")
        # dedup: 103 (same code as 102, slower) goes; everything else stays.
        check(sub.num_rows == 10, f"dedup keeps the fastest per (user, code, GPU): {sub.num_rows} rows")
        df = sub.to_pandas()
        codes = set(df[df.user_name == "alice"].code)
        check(TRITON.format(2) in codes and
              df[(df.user_name == "alice") & (df.code == TRITON.format(2))].score.tolist() == [2.0e-5],
              "pandas: the kept duplicate is the faster one")
        check(df[df.user_name == "bob"].status.tolist().count("hacked") == 1, "hacked status kept")
        ok_df = read_config(dir_a, "successful_submissions").to_pandas()
        check(len(ok_df) == int(df.passed.sum()) and ok_df.passed.all(), "successful = passed rows")
        import datasets
        meta, body = check_hub_dataset(dir_a, ["submissions", "successful_submissions", "leaderboards"],
                                       tmp / "hf")
        check(meta["license"] == "cc-by-4.0" and meta["size_categories"] == ["n<1K"],
              "card: the license asked for, the size category of 10 rows")
        code_feature = [f for f in meta["dataset_info"][0]["features"] if f["name"] == "code"]
        check(code_feature == [{"name": "code", "dtype": "large_string"}],
              f"card: code is large_string as kernelbot-data publishes it: {code_feature}")
        check("| vectoradd | H100 | 8 | 6 |" in body and "| vectoradd | A100 | 1 | 1 |" in body and
              "| grayscale | H100 | 1 | 1 |" in body, "card body: rows per leaderboard and GPU")
        check("kj 0." in body and "Deduplicated" in body and "`problem_name`" in body,
              "card body: kj version, how rows were deduplicated, every column")
        # plots: one per leaderboard and GPU, files beside the card, linked from it, a dot per
        # scored row of the export
        plots = sorted(p.name for p in (dir_a / "assets").glob("*.svg"))
        check(plots == ["best-grayscale-H100.svg", "best-vectoradd-A100.svg", "best-vectoradd-H100.svg"],
              f"card plots written to assets/: {plots}")
        check(all(f"](assets/{name})" in body for name in plots), "card body links every plot")
        scored = df[(df.problem_name == "vectoradd") & (df.runner == "H100")].score.notna().sum()
        svg_text = (dir_a / "assets" / "best-vectoradd-H100.svg").read_text()
        check(svg_text.startswith("<svg") and svg_text.count('class="score"') == scored == 5,
              f"vectoradd/H100 plot: a dot per scored row ({scored})")
        ds = datasets.load_dataset(str(dir_a), "submissions", split="train", cache_dir=str(tmp / "hf"))
        check(len(ds) == 10 and ds.column_names == SUBMISSION_SCHEMA.names,
              "Hugging Face datasets reads the submissions config")
        # a file of kernelbot-data's own (pyarrow's large strings) concatenates with the export
        published = tmp / "kernelbot_data.parquet"
        pq.write_table(pq.read_table(fixture[0]).cast(PUBLISHED_SUBMISSION_SCHEMA), published)
        theirs = datasets.load_dataset("parquet", data_files=str(published), split="train",
                                       cache_dir=str(tmp / "hf"))
        check(len(datasets.concatenate_datasets([ds, theirs])) == 10 + len(ROWS),
              "concatenate_datasets with a file in kernelbot-data's published schema")
        lb = read_config(dir_a, "leaderboards")
        check(lb.column_names == LEADERBOARD_COLUMNS and
              sorted(lb.column("name").to_pylist()) == ["grayscale", "vectoradd"],
              "leaderboards.parquet columns and rows")

        # --- round trip --------------------------------------------------------------------------
        db_b = f"sqlite:{tmp / 'b.db'}"
        kj.run("import", "kernelbot", *shards(dir_a, "submissions"), *shards(dir_a, "leaderboards"),
               "--db", db_b)
        dir_b = tmp / "export_b"
        kj.run("export", "kernelbot", "--out", dir_b, "--db", db_b)
        for name in ["submissions", "successful_submissions"]:
            a = read_config(dir_a, name).sort_by("submission_id")
            b = read_config(dir_b, name).sort_by("submission_id")
            check(a.equals(b), f"round trip (submission layout): {name} identical, ids included")
        check(read_config(dir_a, "leaderboards").sort_by("id").equals(
              read_config(dir_b, "leaderboards").sort_by("id")),
              "round trip: leaderboards.parquet identical, ids included")

        dir_ra = tmp / "export_runs_a"
        kj.run("export", "kernelbot", "--layout", "run", "--out", dir_ra, "--db", db_a)
        runs_a = read_config(dir_ra, "submissions")
        check(runs_a.column_names == RUN_COLUMNS and runs_a.num_rows == 11,
              f"run layout columns, one row per public run: {runs_a.num_rows}")
        db_c = f"sqlite:{tmp / 'c.db'}"
        check_hub_dataset(dir_ra, ["submissions", "successful_submissions", "leaderboards"], tmp / "hf")
        kj.run("import", "kernelbot", *shards(dir_ra, "submissions"), *shards(dir_ra, "leaderboards"),
               "--db", db_c)
        dir_rc = tmp / "export_runs_c"
        kj.run("export", "kernelbot", "--layout", "run", "--out", dir_rc, "--db", db_c)
        check(runs_a.sort_by("run_id").equals(read_config(dir_rc, "submissions").sort_by("run_id")),
              "round trip (run layout): identical, ids included")
        top_c = kj.json("stats", "top", "--leaderboard", "vectoradd", "--db", db_c)
        check(len(top_c) == 3 and top_c[0]["best_score"] == 1.0e-5,
              "imported run-level submissions rank on the leaderboard")

        # --- shards of bounded size ------------------------------------------------------------
        import random
        rng = random.Random(20)
        n = 2500
        big = tmp / "big.parquet"
        write_submissions(big, {
            "submission_id": list(range(1, n + 1)), "leaderboard_id": [7] * n,
            "problem_name": ["vectoradd"] * n, "user_id": ["1"] * n, "user_name": ["eve"] * n,
            "code_id": list(range(1, n + 1)), "file_name": ["submission.py"] * n,
            "submission_time": [t(0)] * n, "status": ["succeeded"] * n,
            "score": [1e-5 + i * 1e-9 for i in range(n)], "passed": [True] * n,
            "mode": ["leaderboard"] * n, "runner": ["H100"] * n,
            "code": ["# " + rng.randbytes(600).hex() + "\n" for _ in range(n)],
        })
        db_big = f"sqlite:{tmp / 'big.db'}"
        kj.run("import", "kernelbot", big, "--db", db_big)
        dir_big = tmp / "export_big"
        kj.run("export", "kernelbot", "--force", "--shard-mb", "1", "--out", dir_big, "--db", db_big)
        files = shards(dir_big, "submissions")
        check(len(files) >= 2 and all(f.stat().st_size < 4 * 2**20 for f in files) and
              [f.name for f in files] == [f"train-{i:05d}-of-{len(files):05d}.parquet"
                                          for i in range(len(files))],
              f"--shard-mb 1: {len(files)} shards named train-i-of-n, each bounded: "
              f"{[f.stat().st_size for f in files]}")
        check_hub_dataset(dir_big, ["submissions", "successful_submissions", "leaderboards"], tmp / "hf")
        kj.run("export", "kernelbot", "--force", "--out", dir_big, "--db", db_big)
        check([f.name for f in shards(dir_big, "submissions")] == ["train-00000-of-00001.parquet"],
              "exporting again into the directory replaces the earlier shards")
        check([p.name for p in (dir_big / "assets").glob("*.svg")] == ["best-vectoradd-H100.svg"],
              "one plot for the one leaderboard and GPU")
        kj.run("export", "kernelbot", "--out", dir_big, "--db", db_a)
        check(sorted(p.name for p in (dir_big / "assets").glob("*.svg")) == plots,
              "exporting again into the directory replaces the earlier plots")

        # --- anonymize, open leaderboards --------------------------------------------------------
        dir_anon = tmp / "export_anon"
        kj.run("export", "kernelbot", "--anonymize", "--out", dir_anon, "--db", db_a)
        anon = read_config(dir_anon, "submissions").to_pandas()
        check(not ({"alice", "bob", "carol"} & set(anon.user_name)) and
              sorted(set(anon.user_id)) == ["1", "2", "3"] and
              all(n == "user-" + i for n, i in zip(anon.user_name, anon.user_id)),
              "--anonymize: user-1..user-3, no real names")
        db_d = f"sqlite:{tmp / 'd.db'}"
        kj.run("import", "kernelbot", fixture[0], "--db", db_d)  # no leaderboards.parquet: no deadline
        refused = kj.run("export", "kernelbot", "--out", tmp / "open", "--db", db_d, ok=False)
        check(refused.returncode == 2 and "still open" in refused.stderr and
              not (tmp / "open" / "README.md").exists() and not shards(tmp / "open", "submissions"),
              "open leaderboard refused without --force")
        kj.run("export", "kernelbot", "--force", "--out", tmp / "open", "--db", db_d)
        check(len(shards(tmp / "open", "submissions")) == 1 and (tmp / "open" / "README.md").exists(),
              "--force exports it")

        # --- bad files ------------------------------------------------------------------------
        before = kj.json("stats", "summary", "--db", db_a)
        garbage = tmp / "garbage.parquet"
        garbage.write_bytes(os.urandom(4096))
        p = kj.run("import", "kernelbot", garbage, "--db", db_a, ok=False)
        check(p.returncode == 2 and "garbage.parquet" in p.stderr and "parquet" in p.stderr,
              f"corrupt file: {p.stderr.strip()}")
        foreign = tmp / "foreign.parquet"
        pq.write_table(pa.table({"x": [1], "y": ["a"]}), foreign)
        p = kj.run("import", "kernelbot", foreign, "--db", db_a, ok=False)
        check(p.returncode == 2 and "not a kernelbot-data file" in p.stderr, f"foreign file: {p.stderr.strip()}")
        fixture_table = pq.read_table(fixture[0])
        missing = tmp / "missing.parquet"
        pq.write_table(fixture_table.drop_columns(["runner"]), missing)
        p = kj.run("import", "kernelbot", missing, "--db", db_a, ok=False)
        check(p.returncode == 2 and "column 'runner'" in p.stderr and "missing" in p.stderr,
              f"missing column named: {p.stderr.strip()}")
        mistyped = tmp / "mistyped.parquet"
        i = fixture_table.schema.get_field_index("score")
        pq.write_table(fixture_table.set_column(i, "score", pa.array([str(r[6]) for r in ROWS])), mistyped)
        # a good file first: nothing of it may be stored either
        extra = tmp / "extra.parquet"
        pq.write_table(fixture_table.set_column(
            fixture_table.schema.get_field_index("user_name"), "user_name", pa.array(["dave"] * len(ROWS))), extra)
        p = kj.run("import", "kernelbot", extra, mistyped, "--db", db_a, ok=False)
        check(p.returncode == 2 and "column 'score' has type string, expected double" in p.stderr,
              f"mistyped column named: {p.stderr.strip()}")
        check(kj.json("stats", "summary", "--db", db_a) == before, "bad files imported nothing")
        # a bad value in the last row, after good files: found before anything is stored
        late = tmp / "late.parquet"
        i = fixture_table.schema.get_field_index("submission_time")
        times = fixture_table.column("submission_time").to_pylist()
        times[-1] = None
        pq.write_table(fixture_table.set_column(
            i, "submission_time", pa.array(times, pa.timestamp("us", tz="UTC"))), late)
        p = kj.run("import", "kernelbot", extra, *shards(dir_a, "leaderboards"), late, "--db", db_a,
                   ok=False)
        check(p.returncode == 2 and "late.parquet" in p.stderr and "no submission_time" in p.stderr,
              f"row without a time named: {p.stderr.strip()}")
        # intact footer, data pages overwritten with zeros: a clean error, nothing stored
        broken = tmp / "broken.parquet"
        data = bytearray(shards(dir_a, "submissions")[0].read_bytes())
        footer = int.from_bytes(data[-8:-4], "little") + 8
        data[4:len(data) - footer] = bytes(len(data) - footer - 4)
        broken.write_bytes(bytes(data))
        p = kj.run("import", "kernelbot", extra, broken, "--db", db_a, ok=False)
        check(p.returncode == 2 and "broken.parquet" in p.stderr, f"zeroed data pages: {p.stderr.strip()}")
        check(kj.json("stats", "summary", "--db", db_a) == before, "nor did the late bad row or zeroed pages")
        # only the code column's pages zeroed: the code is read while the submissions are stored,
        # and the error rolls back the leaderboards created in the same transaction too
        code_only = tmp / "code_only.parquet"
        data = bytearray(shards(dir_a, "submissions")[0].read_bytes())
        meta = pq.ParquetFile(shards(dir_a, "submissions")[0]).metadata
        code_leaf = meta.schema.to_arrow_schema().get_field_index("code")
        for g in range(meta.num_row_groups):
            chunk = meta.row_group(g).column(code_leaf)
            start = chunk.dictionary_page_offset if chunk.has_dictionary_page else chunk.data_page_offset
            data[start:start + chunk.total_compressed_size] = bytes(chunk.total_compressed_size)
        code_only.write_bytes(bytes(data))
        db_z = tmp / "zeroed_code.db"
        p = kj.run("import", "kernelbot", code_only, *shards(dir_a, "leaderboards"), "--db",
                   f"sqlite:{db_z}", ok=False)
        check(p.returncode == 2 and "code_only.parquet" in p.stderr, f"zeroed code pages: {p.stderr.strip()}")
        with sqlite3.connect(db_z) as c:
            stored = [c.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                      for t in ("leaderboards", "submissions", "code_files", "users")]
        check(stored == [0, 0, 0, 0], f"zeroed code pages stored nothing, no leaderboard either: {stored}")

        # --- boostrap rows --------------------------------------------------------------------------
        boot = tmp / "boostrap"
        out = kj.run("export", "boostrap", "--out", boot, "--db", db_a).stdout
        check_hub_dataset(boot, ["default"], tmp / "hf")
        rows = pq.read_table(sorted((boot / "data").glob("train-*.parquet"))[0])
        expected = ["pt_code", "triton_code", "pt_entrypoint", "triton_entrypoint", "reasoning",
                    "messages", "tests_code", "pt_code_runs", "stdout", "stderr", "stop_reason",
                    "prompt", "entrypoint", "tests", "verdict", "max_error", "speedup", "timings"]
        check(rows.column_names == expected, "boostrap columns")
        check(rows.num_rows == 5 and set(rows.column("triton_code").to_pylist()) ==
              {TRITON.format(k) for k in range(1, 5)}, f"boostrap rows: the 5 Triton submissions ({out.strip()})")
        check(str(rows.schema.field("messages").type) == "list<element: struct<content: string, role: string>>",
              "boostrap messages type")
        hf = datasets.load_dataset(str(boot), split="train", cache_dir=str(tmp / "hf"))
        check(len(hf) == 5, "Hugging Face datasets reads the boostrap export")

        # --- the parquet a GPU run of the bundled corpus wrote (docs/bootstrap.md, H100) ------------
        # Kept as written there: the published schema may not drift from what earlier runs wrote.
        kept_dir = Path(__file__).resolve().parent / "bootstrap-h100"
        for part, count in (("functions", 31), ("kernelbench", 6)):
            kept = pq.read_table(kept_dir / f"{part}.parquet")
            same = kept.schema.equals(rows.schema)
            check(same, f"the GPU run's {part} rows have today's boostrap schema" +
                  ("" if same else f": {kept.schema} vs {rows.schema}"))
            verdicts = kept.column("verdict").to_pylist()
            speedups = kept.column("speedup").to_pylist()
            check(len(verdicts) == count and set(verdicts) == {"accepted"} and all(s > 0 for s in speedups),
                  f"the GPU run's {part} rows: {count} accepted, each with its speedup")
            hf_kept = datasets.load_dataset("parquet", data_files=str(kept_dir / f"{part}.parquet"),
                                            split="train", cache_dir=str(tmp / "hf"))
            check(len(hf_kept) == count, f"Hugging Face datasets reads the GPU run's {part} rows")

        # --- boostrap rows of a bootstrap run: what the run recorded ------------------------------
        run_dir = tmp / "bootstrap_run"
        run_dir.mkdir()
        recorded = {
            "row_id": "abc", "pt_code": "import torch\ndef f(x):\n    return x + 1\n",
            "triton_code": TRITON.format(7), "pt_entrypoint": "f", "triton_entrypoint": "f_triton",
            "reasoning": "add one, elementwise", "tests_code": "def test_f():\n    f(torch.ones(4))\n",
            "prompt": [{"role": "user", "content": "translate f"}],
            "messages": [{"role": "user", "content": "translate f"},
                         {"role": "assistant", "content": "```python\n...\n```"}],
            "stop_reason": "stop", "pt_code_runs": True, "stdout": "", "stderr": "",
            "entrypoint": "f", "tests": "[]", "verdict": "accepted", "max_error": 0.0,
            "speedup": 1.5, "timings": [], "turns": 1,
        }
        (run_dir / "rows.jsonl").write_text(json.dumps(recorded) + "\n")
        boot_run = tmp / "boostrap_run_export"
        kj.run("export", "boostrap", "--bootstrap-run", run_dir, "--out", boot_run)
        check_hub_dataset(boot_run, ["default"], tmp / "hf")
        row = pq.read_table(sorted((boot_run / "data").glob("train-*.parquet"))[0]).to_pylist()[0]
        check((row["prompt"], row["messages"], row["reasoning"], row["stop_reason"], row["tests_code"]) ==
              (recorded["prompt"], recorded["messages"], recorded["reasoning"], recorded["stop_reason"],
               recorded["tests_code"]),
              "boostrap export of a bootstrap run carries prompt, messages, reasoning, stop_reason, tests_code")
        bad_run = tmp / "bad_run"
        bad_run.mkdir()
        (bad_run / "rows.jsonl").write_text("{not json\n")
        p = kj.run("export", "boostrap", "--bootstrap-run", bad_run, "--out", tmp / "bad_out", ok=False)
        check(p.returncode == 2 and "rows.jsonl:1" in p.stderr and not (tmp / "bad_out" / "README.md").exists(),
              f"a bad rows.jsonl: clear error, nothing written: {p.stderr.strip()}")


if __name__ == "__main__":
    main()
    sys.exit(report())
