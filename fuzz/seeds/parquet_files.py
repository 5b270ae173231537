"""Seed corpus of the parquet_import fuzz target: the kernelbot-data files of tests/data's round
trip (submission layout, run layout, leaderboards), each snappy-compressed as published and
uncompressed (whose values a mutation reaches directly). Usage: parquet_files.py OUT_DIR"""

import sys
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "data"))
from round_trip_test import CODES, LEADERBOARDS, SET, leaderboards_table, run_rows, submissions_table  # noqa: E402


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    names = {lb[0]: lb[1] for lb in LEADERBOARDS}
    tables = {
        "submissions": submissions_table(SET[:4], CODES, names),
        "runs": run_rows().slice(0, 4),
        "leaderboards": leaderboards_table(LEADERBOARDS),
    }
    for name, table in tables.items():
        for compression in ("snappy", "none"):
            pq.write_table(table, out / f"{name}-{compression}.parquet", compression=compression)


if __name__ == "__main__":
    main()
