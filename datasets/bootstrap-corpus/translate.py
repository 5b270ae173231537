#!/usr/bin/env python3
"""A translator command for `kj bootstrap --translator-command`: answers with the hand-written
translation of the program in the prompt (translations/<entrypoint>.py for corpus.jsonl rows,
translations/kb_<file>.py for kernelbench/ files), as a model would, in a ```python block."""
import json
import os
import pathlib
import sys

MARKER = "##### TESTS #####"
here = pathlib.Path(__file__).resolve().parent


def programs():
    for path in sorted((here / "programs").glob("*.py")):
        yield path.read_text().split(MARKER + "\n", 1)[0].rstrip() + "\n", path.stem
    for path in sorted((here / "kernelbench").glob("*.py")):
        yield path.read_text(), "kb_" + path.stem


def main() -> int:
    # The first user message holds the program, also on repair turns.
    with open(os.environ["KJ_TRANSLATOR_MESSAGES"], encoding="utf-8") as f:
        prompt = json.load(f)[0]["content"]
    sys.stdin.read()
    found = [(len(code), name) for code, name in programs() if code.strip() in prompt]
    if not found:
        print("I do not know this program.")
        return 0
    name = max(found)[1]
    print("```python\n" + (here / "translations" / f"{name}.py").read_text() + "```")
    return 0


if __name__ == "__main__":
    sys.exit(main())
