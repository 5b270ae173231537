"""bench/conformance.py's table: how eval.py's verdicts and kj's are matched."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import conformance  # noqa: E402


def row(judge, problem, submission, verdict, concurrency=1, round_no=1):
    return {"judge": judge, "problem": problem, "submission": submission, "verdict": verdict,
            "concurrency": concurrency, "round": round_no, "reason": ""}


def table(rows):
    cases = sorted({(r["problem"], None, r["submission"], None) for r in rows})
    return conformance.render(rows, cases)


class Agreement(unittest.TestCase):
    def test_a_crash_beside_a_passing_check_is_not_the_verdict(self):
        text, disagreements = table([
            row("eval.py", "p/mm", "submission.py", "no-check", concurrency=4),
            row("eval.py", "p/mm", "submission.py", "pass"),
            row("kj", "p/mm", "submission.py", "accepted"),
            row("kj", "p/mm", "submission.py", "accepted", concurrency=4)])
        self.assertEqual(disagreements, 0)
        self.assertIn("eval.py crashed in some runs and reached its check in others", text)
        self.assertIn("p/mm submission.py", text)

    def test_a_crash_in_every_run_is_a_rejection(self):
        _, disagreements = table([row("eval.py", "p/h", "submission.py", "no-check"),
                                  row("kj", "p/h", "submission.py", "compile_error")])
        self.assertEqual(disagreements, 0)
        _, disagreements = table([row("eval.py", "p/h", "submission.py", "no-check"),
                                  row("kj", "p/h", "submission.py", "accepted")])
        self.assertEqual(disagreements, 1)

    def test_checks_that_differ_between_runs_disagree_with_any_kj_verdict(self):
        for verdict in ("accepted", "wrong_answer"):
            _, disagreements = table([row("eval.py", "p/x", "a.py", "pass"),
                                      row("eval.py", "p/x", "a.py", "fail"),
                                      row("kj", "p/x", "a.py", verdict)])
            self.assertEqual(disagreements, 1, verdict)

    def test_kj_failing_to_reach_a_verdict_is_a_disagreement(self):
        _, disagreements = table([row("eval.py", "p/x", "a.py", "pass"),
                                  row("kj", "p/x", "a.py", "accepted"),
                                  row("kj", "p/x", "a.py", "internal_error", round_no=2)])
        self.assertEqual(disagreements, 1)

    def test_a_reference_its_own_eval_fails_is_broken_upstream(self):
        text, disagreements = table([row("eval.py", "p/b", "ref_call", "fail"),
                                     row("kj", "p/b", "ref_call", "accepted")])
        self.assertEqual(disagreements, 0)
        self.assertIn("broken upstream: p/b", text)


if __name__ == "__main__":
    unittest.main()
