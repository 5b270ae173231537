"""kj agent-setup: the AGENTS.md and skill it writes, followed step by step as an agent would.

The test writes the files for problems/vectoradd, then runs every ```sh command of AGENTS.md's
local loop in order, in the directory it was written to, and reads the JSON the text says each
command prints: the template is rejected, the bundled correct solution (what the agent writes)
is accepted, timed and compared with itself. The server commands are checked for their form only
(no server runs here).

  python3 tests/agent/agent_setup_test.py --kj build/kj --root .
"""

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FAILURES = []


def check(condition, what):
    print(f"{'ok  ' if condition else 'FAIL'}  {what}")
    if not condition:
        FAILURES.append(what)


def sh_blocks(markdown):
    """The commands of every ```sh block, in order (indented blocks of list items included)."""
    blocks = re.findall(r"^[ \t]*```sh\n(.*?)^[ \t]*```", markdown, re.S | re.M)
    return [[line.strip() for line in b.splitlines() if line.strip()] for b in blocks]


def front_matter(text):
    import yaml
    check(text.startswith("---\n"), "the skill begins with YAML front matter")
    return yaml.safe_load(text[4:].partition("\n---\n")[0])


def run(command, cwd, budget=900):
    """A command as written (a shell line: it redirects its JSON into a file)."""
    return subprocess.run(command, shell=True, cwd=cwd, capture_output=True, text=True,
                          timeout=budget)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kj", required=True)
    parser.add_argument("--root", required=True)
    args = parser.parse_args()
    kj = str(Path(args.kj).resolve())
    problem = Path(args.root).resolve() / "problems" / "vectoradd"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        p = subprocess.run([kj, "agent-setup", problem, "--dir", work, "--kj", kj],
                           capture_output=True, text=True)
        check(p.returncode == 0, f"kj agent-setup exits 0: {p.stderr.strip()}")
        agents = work / "AGENTS.md"
        skill = work / ".claude" / "skills" / "kj-kernel" / "SKILL.md"
        check(agents.exists() and skill.exists(), "AGENTS.md and the skill are written")
        meta = front_matter(skill.read_text())
        check(meta.get("name") == "kj-kernel" and "kj" in meta.get("description", ""),
              f"the skill names itself and says when to use it: {meta}")
        again = subprocess.run([kj, "agent-setup", problem, "--dir", work],
                               capture_output=True, text=True)
        check(again.returncode == 2 and "exists" in again.stderr and
              agents.read_text().count(kj) > 0, "a second run refuses to overwrite, files kept")

        blocks = sh_blocks(agents.read_text())
        check(len(blocks) == 5, f"five command blocks: read, test, time, compare, server ({len(blocks)})")
        read, test, time, compare, server = blocks

        # 1. read the problem, copy the template
        for command in read:
            p = run(command, work)
            check(p.returncode == 0, f"step 1 `{command}` exits 0")
        check((work / "submission.py").exists(), "step 1 leaves submission.py")

        # 2. the template is not a kernel yet: rejected, and the JSON says why
        p = run(test[0], work)
        result = json.loads((work / "result.json").read_text())
        check(p.returncode == 1 and result["verdict"] == "runtime_error" and result["reason"] and
              result["tests"] and "NotImplementedError" in json.dumps(result),
              f"step 2 on the template: exit 1, verdict {result['verdict']}, the error named")
        # the agent writes a kernel (the bundled correct one) and runs step 2 again
        shutil.copy(problem / "solutions" / "correct" / "pytorch.py", work / "submission.py")
        p = run(test[0], work)
        result = json.loads((work / "result.json").read_text())
        check(p.returncode == 0 and result["verdict"] == "accepted" and
              all(t["status"] for t in result["tests"]), "step 2 on a correct kernel: accepted")

        # 3. time it: one case, little time per case (a CPU host), the rest as written
        p = run(time[0] + " --case 0 --max-time 2", work)
        timing = json.loads((work / "timing.json").read_text())
        check(p.returncode == 0 and timing["benchmarks"] and
              timing["benchmarks"][0]["summary"]["median_ns"] > 0 and "speedup" in timing,
              "step 3: benchmarks[0].summary.median_ns and speedup in timing.json")

        # 4. compare with the best so far (itself)
        shutil.copy(work / "submission.py", work / "best.py")
        p = run(compare[0] + " --case 0 --max-time 2", work)
        comparison = json.loads((work / "compare.json").read_text())
        c = comparison["comparisons"][0]
        check(c["outcome"] in ("a_faster", "b_faster", "tie") and c["lo"] <= c["ratio"] <= c["hi"],
              f"step 4: comparisons[0] has outcome {c['outcome']}, ratio within [lo, hi]")

        # the server commands: kj's own parser accepts them (no server here)
        for command in server:
            words = shlex.split(command)
            p = subprocess.run(words + ["--help"], cwd=work, capture_output=True, text=True)
            check(p.returncode == 0, f"server step `{' '.join(words[1:3])}` parses")
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
