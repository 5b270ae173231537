"""What the data tests share: kernelbot-data's submission layout, a way to write a submissions
file in it, and the check-and-report protocol (every check printed, exit 1 if one failed)."""

import argparse

import pyarrow as pa
import pyarrow.parquet as pq

# submissions.parquet of kernelbot-data (the submission layout), column by column.
SUBMISSION_SCHEMA = pa.schema([
    ("submission_id", pa.int64()), ("leaderboard_id", pa.int64()), ("problem_name", pa.string()),
    ("user_id", pa.string()), ("user_name", pa.string()), ("code_id", pa.int64()),
    ("file_name", pa.string()), ("submission_time", pa.timestamp("us", tz="UTC")),
    ("status", pa.string()), ("score", pa.float64()), ("passed", pa.bool_()), ("mode", pa.string()),
    ("runner", pa.string()), ("code", pa.string()),
])

# The same as kernelbot-data's exporter writes it: its strings are large_string.
PUBLISHED_SUBMISSION_SCHEMA = pa.schema([
    pa.field(f.name, pa.large_string() if f.type == pa.string() else f.type)
    for f in SUBMISSION_SCHEMA
])

FAILURES = []


def check(condition, what):
    print(f"{'ok  ' if condition else 'FAIL'}  {what}")
    if not condition:
        FAILURES.append(what)


def kj_argument():
    """The kj executable under test (--kj)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--kj", required=True)
    return parser.parse_args().kj


def write_submissions(path, columns):
    """A submissions.parquet in the submission layout; `columns` maps every column to its values."""
    pq.write_table(pa.table(columns, schema=SUBMISSION_SCHEMA), path)


def report():
    """The exit status: 0 when every check passed."""
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed")
        return 1
    print("all checks passed")
    return 0
