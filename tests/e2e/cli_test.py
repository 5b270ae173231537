#!/usr/bin/env python3
"""End-to-end behaviour of the `kj` command a user would notice."""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

results = []


def case(name):
    def wrap(fn):
        results.append((name, fn))
        return fn
    return wrap


def kj(*args, check_json=False):
    proc = subprocess.run([KJ, *args], capture_output=True, text=True)
    if check_json:
        try:
            return proc, json.loads(proc.stdout)
        except ValueError:
            raise AssertionError(f"no JSON from kj {' '.join(args)} (exit {proc.returncode}):\n"
                                 f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return proc


def problem(name):
    return os.path.join(ROOT, "problems", name)


def copy_of_vectoradd(tmp):
    """A writable copy of problems/vectoradd (with the shared utils.py beside it) to break."""
    copy = os.path.join(tmp, "vectoradd")
    shutil.copytree(problem("vectoradd"), copy)
    shutil.copy(os.path.join(ROOT, "problems", "utils.py"), os.path.join(tmp, "utils.py"))
    return copy


@case("eval prints a readable report with per-test lines and exits 0 when accepted")
def _():
    proc = kj("eval", problem("vectoradd"), os.path.join(problem("vectoradd"), "solutions/correct/triton.py"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "verdict: accepted" in proc.stdout, proc.stdout
    assert proc.stdout.count("  test ") == 5, proc.stdout


@case("a wrong answer shows the mismatch summary and exits 1")
def _():
    proc = kj("eval", problem("vectoradd"), os.path.join(problem("vectoradd"), "solutions/wrong/subtract.py"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "verdict: wrong_answer" in proc.stdout, proc.stdout
    assert "mismatch" in proc.stdout.lower(), proc.stdout


@case("--json carries verdict, tests, system info and sandbox facts")
def _():
    proc, result = kj("eval", problem("vectoradd"), os.path.join(problem("vectoradd"), "solutions/correct/pytorch.py"),
                      "--json", check_json=True)
    assert result["verdict"] == "accepted", result
    assert len(result["tests"]) == 5 and all(t["status"] == "pass" for t in result["tests"])
    assert result["system"]["torch"].startswith("2."), result["system"]
    assert result["sandbox"]["started"] and result["sandbox"]["limit"] == "none"
    assert result["sandbox"]["wall_ns"] > 0
    # The harness's own clock splits the sandbox's wall time: imports before the job, then the
    # job (hello to done), then teardown; each mark within the sandbox's wall time.
    times = result["process_times"]
    wall_s = result["sandbox"]["wall_ns"] / 1e9
    assert 0 < times["imports_s"] <= times["at_hello_s"] + 0.02, times
    assert times["at_hello_s"] <= times["at_done_s"] <= wall_s + 0.05, (times, wall_s)


@case("benchmark mode on the CPU times every CPU-sized benchmark and scores by ranking_by")
def _():
    # Every timed call gets freshly generated inputs, and generating the GPU-sized 8192x8192
    # ones on a CPU takes minutes: on a CPU the judge runs task.yml's cpu_benchmarks.
    solution = os.path.join(problem("vectoradd"), "solutions/correct/pytorch.py")
    proc, result = kj("eval", problem("vectoradd"), solution, "--mode", "benchmark",
                      "--max-repeats", "5", "--max-time", "5", "--json", check_json=True)
    assert result["verdict"] == "accepted", result["reason"]
    assert result["benchmark_set"] == "cpu_benchmarks", result["benchmark_set"]
    assert [b["spec"]["size"] for b in result["benchmarks"]] == [256, 512, 1024], \
        [b["spec"] for b in result["benchmarks"]]
    for b in result["benchmarks"]:
        assert b["summary"]["n"] >= 3 and b["summary"]["median_ns"] > 0, b
        assert b["clock"] == "monotonic"
    assert result["score_ns"] > 0 and result["ranking_by"] == "geom"
    proc = kj("eval", problem("vectoradd"), solution, "--mode", "benchmark", "--case", "0")
    assert "on the CPU-sized shapes of task.yml's cpu_benchmarks" in proc.stdout, proc.stdout
    # A problem without them runs its benchmarks as they are.
    with tempfile.TemporaryDirectory() as tmp:
        plain = copy_of_vectoradd(tmp)
        task = os.path.join(plain, "task.yml")
        with open(task) as f:
            text = f.read()
        text = text[:text.index("\n# kerneljudge's own key")] + text[text.index("\nranking_by:"):]
        text = text.replace('"size": 1024, "seed": 31232, "bytes": 6291456', '"size": 96, "seed": 31232')
        with open(task, "w") as f:
            f.write(text)
        proc, result = kj("eval", plain, os.path.join(plain, "solutions/correct/pytorch.py"),
                          "--mode", "benchmark", "--case", "0", "--json", check_json=True)
    assert result["benchmark_set"] == "benchmarks" and result["benchmarks"][0]["spec"]["size"] == 96


@case("a malformed task.yml is refused naming file, line and field; exit 2")
def _():
    with tempfile.TemporaryDirectory() as tmp:
        bad = copy_of_vectoradd(tmp)
        with open(os.path.join(bad, "task.yml")) as f:
            text = f.read()
        with open(os.path.join(bad, "task.yml"), "w") as f:
            f.write(text.replace('ranking_by: "geom"', 'ranking_by: "fastest"'))
        proc = kj("eval", bad, os.path.join(bad, "solutions/correct/pytorch.py"))
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "task.yml:" in proc.stderr and "ranking_by" in proc.stderr, proc.stderr


@case("a missing submission file or bad mode is a usage error, not a crash")
def _():
    proc = kj("eval", problem("vectoradd"), "/nonexistent/file.py")
    assert proc.returncode != 0 and "nonexistent" in (proc.stderr + proc.stdout)
    proc = kj("eval", problem("vectoradd"), os.path.join(problem("vectoradd"), "solutions/correct/pytorch.py"),
              "--mode", "fast")
    assert proc.returncode == 2, proc.stderr


@case("a broken reference is an internal error, never the submission's fault")
def _():
    with tempfile.TemporaryDirectory() as tmp:
        bad = copy_of_vectoradd(tmp)
        with open(os.path.join(bad, "reference.py"), "a") as f:
            f.write("\nraise ImportError('reference deliberately broken')\n")
        proc, result = kj("eval", bad, os.path.join(bad, "solutions/correct/pytorch.py"), "--json", check_json=True)
        assert result["verdict"] == "internal_error", result["reason"]
        assert proc.returncode == 3


@case("leaderboard mode: public tests, then a ranked run on secret seeds, with the reference's speedup")
def _():
    proc, result = kj("eval", problem("vectoradd"), os.path.join(problem("vectoradd"), "solutions/correct/pytorch.py"),
                      "--mode", "leaderboard", "--case", "0", "--max-repeats", "12", "--max-time", "5",
                      "--secret-seed", "12345", "--json", check_json=True)
    assert result["verdict"] == "accepted", result["reason"]
    assert len(result["ranked_tests"]) == 5 and all(t["phase"] == "ranked" for t in result["ranked_tests"])
    bench = result["benchmarks"][0]
    assert bench["phase"] == "ranked" and bench["summary"]["n"] >= 10, bench["summary"]
    assert bench["rechecked"] >= 1 and bench["speedup"] > 0 and result["speedup"] > 0
    assert result["score_ns"] > 0
    # The reference was timed alone, in a run of its own after the submission's.
    assert result["process_times"]["reference_wall_s"] > 0, result["process_times"]


# The reference's kernel refuses to run where submission.py is empty: in the run that times the
# reference alone, which holds nothing of the submission. The checks, made with the original
# function in the submission's run, are unaffected.
REFUSES_ALONE = """

import os as _os

_checked_ref_kernel = ref_kernel


def ref_kernel(data):
    here = _os.path.dirname(_os.path.abspath(__file__))
    if _os.path.getsize(_os.path.join(here, "submission.py")) == 0:
        raise RuntimeError("the reference deliberately fails when timed alone")
    return _checked_ref_kernel(data)
"""


@case("a reference that fails when timed alone leaves the verdict standing, without a speedup")
def _():
    with tempfile.TemporaryDirectory() as tmp:
        bad = copy_of_vectoradd(tmp)
        with open(os.path.join(bad, "reference.py"), "a") as f:
            f.write(REFUSES_ALONE)
        solution = os.path.join(bad, "solutions/correct/pytorch.py")
        args = ["--mode", "benchmark", "--case", "0", "--max-repeats", "12", "--max-time", "1"]
        proc, result = kj("eval", bad, solution, *args, "--json", check_json=True)
        assert proc.returncode == 0 and result["verdict"] == "accepted", result["reason"]
        assert result["speedup"] is None, result["speedup"]
        bench = result["benchmarks"][0]
        assert bench["summary"]["n"] >= 10 and "reference_summary" not in bench, bench.keys()
        warning = [w for w in result["sandbox"]["warnings"] if "reference was not timed" in w]
        assert warning and "deliberately fails when timed alone" in warning[0], \
            result["sandbox"]["warnings"]
        proc = kj("eval", bad, solution, *args)
        assert proc.returncode == 0 and "warning: the reference was not timed" in proc.stdout, \
            proc.stdout


@case("on a CPU, timing stops at short caps by default and the report says CPU times are for development")
def _():
    solution = os.path.join(problem("vectoradd"), "solutions/correct/pytorch.py")
    proc, result = kj("eval", problem("vectoradd"), solution, "--mode", "benchmark", "--case", "0",
                      "--json", check_json=True)
    assert result["verdict"] == "accepted", result["reason"]
    assert result["timing"] == {"max_samples": 100, "max_seconds": 1.0}, result["timing"]
    assert len(result["benchmarks"][0]["samples_ns"]) <= 100
    proc, result = kj("eval", problem("vectoradd"), solution, "--mode", "benchmark", "--case", "0",
                      "--max-time", "2", "--json", check_json=True)
    assert result["timing"] == {"max_samples": 100, "max_seconds": 2.0}, result["timing"]
    proc = kj("eval", problem("vectoradd"), solution, "--mode", "benchmark", "--case", "0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "CPU times are for development only" in proc.stdout, proc.stdout


@case("--min-time and --precision set the stopping rule; a precision out of range is refused")
def _():
    solution = os.path.join(problem("vectoradd"), "solutions/correct/pytorch.py")
    proc, result = kj("eval", problem("vectoradd"), solution, "--mode", "benchmark", "--case", "0",
                      "--min-time", "0", "--precision", "0.09", "--no-reference", "--json",
                      check_json=True)
    assert result["verdict"] == "accepted", result["reason"]
    assert result["timing"] == {"max_samples": 100, "max_seconds": 1.0, "min_seconds": 0.0,
                                "target_rel_sem": 0.09}, result["timing"]
    # The rule itself with these settings: tests/harness/test_timing.py (CPU samples on a loaded
    # machine are too noisy to say here when it stopped).
    proc = kj("eval", problem("vectoradd"), solution, "--precision", "0.5")
    assert proc.returncode != 0 and "precision" in proc.stdout + proc.stderr, proc.stdout + proc.stderr


@case("a submission right on public seeds and wrong on the secret run is not ranked")
def _():
    proc, result = kj("eval", problem("vectoradd"), os.path.join(ROOT, "tests/leaderboard/public_only.py"),
                      "--mode", "leaderboard", "--case", "0", "--max-repeats", "12", "--max-time", "1",
                      "--json", check_json=True)
    assert result["verdict"] == "wrong_answer", result["reason"]
    assert "not ranked" in result["reason"] and "secret" in result["reason"], result["reason"]
    assert result["score_ns"] is None
    assert all(t["status"] == "pass" for t in result["tests"])


@case("outputs of timed calls are re-checked: wrong only while being timed is caught")
def _():
    proc, result = kj("eval", problem("vectoradd"), os.path.join(ROOT, "tests/leaderboard/wrong_when_timed.py"),
                      "--mode", "leaderboard", "--case", "0", "--max-repeats", "12", "--max-time", "1",
                      "--no-reference", "--json", check_json=True)
    assert result["verdict"] == "wrong_answer", result["reason"]
    assert "timed call" in result["reason"] and "not ranked" in result["reason"], result["reason"]


@case("the secret seed never reaches the submission's process")
def _():
    secret = "987654321987"
    with tempfile.TemporaryDirectory() as tmp:
        spy = os.path.join(tmp, "spy.py")
        with open(spy, "w") as f:
            f.write(SPY)
        proc, result = kj("eval", problem("vectoradd"), spy, "--mode", "leaderboard", "--case", "0",
                          "--max-repeats", "10", "--max-time", "1", "--secret-seed", secret, "-v", "--json",
                          check_json=True)
        assert result["verdict"] == "accepted", result["reason"]
        assert "SPY-DONE" in result["stdout"], result["stdout"][-500:]
        assert secret not in result["stdout"], "the submission found the secret"


SPY = """
import gc, os, sys
seen = []

def custom_kernel(data):
    if not seen:
        seen.append(1)
        found = []
        for obj in getattr(gc, "get_" + "objects")():
            try:
                found.append(repr(obj)[:2000])
            except Exception:
                pass
        try:
            found.append(os.read(0, 4096).decode(errors="replace"))
        except OSError:
            pass
        print("\\n".join(found)[-200000:])
        print("SPY-DONE")
    a, b = data
    return a + b
"""


@case("kj compare ranks a slower copy below the original, and pairs a kernel with itself")
def _():
    fast = os.path.join(problem("vectoradd"), "solutions/correct/pytorch.py")
    with tempfile.TemporaryDirectory() as tmp:
        slow = os.path.join(tmp, "slow.py")
        with open(slow, "w") as f:
            f.write("import time\nimport torch\n\ndef custom_kernel(data):\n    a, b = data\n"
                    "    out = a + b\n    time.sleep(0.02)\n    return out\n")
        # 20 ms per call: far above what a loaded 2-core machine's noise moves a 1024² add by.
        proc, result = kj("compare", problem("vectoradd"), fast, slow, "--case", "0", "--max-time", "2",
                          "--json", check_json=True)
        assert result["verdict"] == "accepted", result["reason"]
        assert result["comparisons"][0]["outcome"] == "a_faster", result["comparisons"][0]["text"]
        proc, result = kj("compare", problem("vectoradd"), fast, fast, "--case", "0", "--max-time", "1",
                          "--json", check_json=True)
        assert result["comparisons"][0]["pairs"] >= 16


@case("in kj compare, a B that writes to every fd reaches only its own channel: the failure is B's")
def _():
    fast = os.path.join(problem("vectoradd"), "solutions/correct/pytorch.py")
    proc, result = kj("compare", problem("vectoradd"), fast, os.path.join(ROOT, "tests/corpus/forge_result_lines.py"),
                      "--case", "0", "--max-time", "0.5", "--json", check_json=True)
    assert result["verdict"] == "runtime_error", result["reason"]
    assert result["reason"].startswith("submission B:"), result["reason"]


@case("a submission over the source size limit is refused before anything runs; exit 2")
def _():
    with tempfile.TemporaryDirectory() as tmp:
        huge = os.path.join(tmp, "huge.py")
        with open(huge, "w") as f:
            f.write("def custom_kernel(data):\n    return data[0] + data[1]\n")
            f.write(("# padding" + " " * 90 + "\n") * 11000)  # 1.1 MB, over the 1 MiB default
        proc = kj("eval", problem("vectoradd"), huge)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "over the limit of 1048576 bytes" in proc.stderr and "nothing was run" in proc.stderr, proc.stderr
        assert "verdict" not in proc.stdout, proc.stdout
        # The limit is an option: raised, the same file is judged (and accepted).
        proc, result = kj("eval", problem("vectoradd"), huge, "--max-source-bytes", "2000000", "--json",
                          check_json=True)
        assert result["verdict"] == "accepted", result["reason"]
        # In kj compare, for either submission.
        correct = os.path.join(problem("vectoradd"), "solutions/correct/pytorch.py")
        proc = kj("compare", problem("vectoradd"), correct, huge, "--case", "0")
        assert proc.returncode == 2 and "huge.py is" in proc.stderr, proc.stdout + proc.stderr


@case("problem show prints the parsed task")
def _():
    proc, shown = kj("problem", "show", problem("vectoradd"), check_json=True)
    assert shown["name"] == "vectoradd" and shown["ranking_by"] == "geom" and len(shown["tests"]) == 5


def main():
    global KJ, ROOT
    parser = argparse.ArgumentParser()
    parser.add_argument("--kj", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("--only", default="", help="run only the cases whose name has this")
    args = parser.parse_args()
    KJ, ROOT = args.kj, args.root
    passed = failed = 0
    for name, fn in results:
        if args.only not in name:
            continue
        try:
            fn()
            passed += 1
            print(f"ok   {name}")
        except AssertionError as exc:
            failed += 1
            print(f"FAIL {name}\n     {exc}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
