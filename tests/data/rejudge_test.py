"""kj rejudge on this machine's device (the CPU here): an imported submission is judged again.

A published vectoradd submission (the bundled correct solution, listed at 10 us on "cpu") is
imported; its leaderboard is then pointed at the bundled problem (an imported leaderboard has no
problem directory) and `kj rejudge --top 1` runs it. The new job and its runs are recorded, the
submission takes the new verdict and score, and the imported run stays.

  $KJ_PYTHON tests/data/rejudge_test.py --kj build/kj
"""

import json
import sqlite3
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from kernelbot_fixture import check, kj_argument, report, write_submissions

ROOT = Path(__file__).resolve().parents[2]


def main():
    kj = kj_argument()
    code = (ROOT / "problems" / "vectoradd" / "solutions" / "correct" / "pytorch.py").read_text()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        write_submissions(tmp / "submissions.parquet", {
            "submission_id": [1], "leaderboard_id": [1], "problem_name": ["vectoradd"],
            "user_id": ["1"], "user_name": ["alice"], "code_id": [1], "file_name": ["submission.py"],
            "submission_time": [datetime(2025, 6, 1, 12, tzinfo=timezone.utc)],
            "status": ["succeeded"], "score": [1.0e-5], "passed": [True], "mode": ["leaderboard"],
            "runner": ["cpu"], "code": [code],
        })
        db = tmp / "kj.db"
        subprocess.run([kj, "import", "kernelbot", tmp / "submissions.parquet",
                        "--db", f"sqlite:{db}"], check=True, capture_output=True)
        with sqlite3.connect(db) as c:
            c.execute("UPDATE leaderboards SET problem_dir = ? WHERE name = 'vectoradd'",
                      (str(ROOT / "problems" / "vectoradd"),))
        # Short timing caps (the score is checked to be new, not for its value).
        p = subprocess.run([kj, "rejudge", "--leaderboard", "vectoradd", "--top", "1", "--json",
                            "--max-time", "0.2", "--max-repeats", "10",
                            "--harness", ROOT / "harness", "--db", f"sqlite:{db}"],
                           capture_output=True, text=True, timeout=1500)
        check(p.returncode == 0, f"kj rejudge exits 0 ({p.stderr.strip()[-300:]})")
        out = json.loads(p.stdout or "[]")
        check(len(out) == 1 and out[0]["verdict"] == "accepted" and out[0]["score"] is not None
              and out[0]["score"] != 1.0e-5, f"the submission judged again, with a new score: {out}")
        with sqlite3.connect(db) as c:
            jobs = c.execute("SELECT id, state FROM jobs WHERE submission_id = 1 ORDER BY id").fetchall()
            runs = c.execute("SELECT job_id, mode, secret, passed, score FROM runs "
                             "WHERE submission_id = 1 ORDER BY id").fetchall()
            verdict = c.execute("SELECT verdict, score FROM submissions WHERE id = 1").fetchone()
        check(len(jobs) == 2 and all(state == "done" for _, state in jobs),
              f"a second job, done: {jobs}")
        check(runs[0] == (jobs[0][0], "leaderboard", 0, 1, 1.0e-5), f"the imported run is kept: {runs[:1]}")
        new = [r for r in runs if r[0] == jobs[-1][0]]
        check(any(r[1] == "leaderboard" and r[2] == 0 and r[3] == 1 and r[4] for r in new),
              f"the new job recorded a passed public leaderboard run: {new}")
        check(out and verdict == ("accepted", out[0]["score"]), f"the submission's verdict and score: {verdict}")


if __name__ == "__main__":
    main()
    sys.exit(report())
