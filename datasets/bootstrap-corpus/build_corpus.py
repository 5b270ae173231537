#!/usr/bin/env python3
"""Writes corpus.jsonl from programs/*.py: the part above the `##### TESTS #####` line is pt_code,
the part below is tests_code, the file name is the entrypoint and the row's id."""
import json
import pathlib
import sys

MARKER = "##### TESTS #####"
here = pathlib.Path(__file__).resolve().parent


def main() -> int:
    rows = []
    for path in sorted((here / "programs").glob("*.py")):
        text = path.read_text()
        if MARKER not in text:
            print(f"{path.name}: no {MARKER} line", file=sys.stderr)
            return 1
        pt_code, tests_code = text.split(MARKER + "\n", 1)
        rows.append({"id": path.stem, "entrypoint": path.stem, "pt_code": pt_code.rstrip() + "\n",
                     "tests_code": tests_code})
    out = here / "corpus.jsonl"
    out.write_text("".join(json.dumps(row) + "\n" for row in rows))
    print(f"{out}: {len(rows)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
