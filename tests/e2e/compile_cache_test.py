#!/usr/bin/env python3
"""The compile cache end to end (docs/sandbox.md, "Compile cache"):

- kj eval: a file that leaves something in Triton's cache directory finds it when judged again,
  in a harness started for the run and forked from a zygote alike; a file that differs by one
  comment finds nothing; --no-compile-cache turns it off;
- an inline C++ extension (load_inline) is built once: judged again, its build directory comes
  back and ninja finds nothing to do (the run reports no new file);
- kj serve: the same file submitted by another user finds nothing of the first user's runs.

Usage: compile_cache_test.py --kj KJ --root REPO
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_test import Api, JudgeServer, free_port, read, server_home  # noqa: E402


def evaluate(kj, problem, path, env, *extra):
    proc = subprocess.run([kj, "eval", problem, path, "--json", *extra], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.stdout, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert result["verdict"] == "accepted", (path, result["verdict"], result["reason"],
                                             result["stderr"][-2000:])
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kj", required=True)
    parser.add_argument("--root", required=True)
    args = parser.parse_args()
    here = os.path.join(args.root, "tests", "e2e", "compile_cache")
    problem = os.path.join(args.root, "problems", "vectoradd")
    tmp = tempfile.mkdtemp(prefix="kj-compile-cache-test-")
    server = None
    try:
        env = dict(os.environ, KJ_COMPILE_CACHE=os.path.join(tmp, "cache"))
        plant = os.path.join(here, "plant.py")
        first = evaluate(args.kj, problem, plant, env)
        assert first["stdout"].startswith("cache: empty"), first["stdout"]
        assert first["compile_cache"]["stored"] == 1, first["compile_cache"]
        again = evaluate(args.kj, problem, plant, env)
        assert again["stdout"].startswith("cache: found"), again["stdout"]
        assert again["compile_cache"]["restored"] == 1, again["compile_cache"]
        forked = evaluate(args.kj, problem, plant, env, "--zygote")
        assert forked["stdout"].startswith("cache: found"), forked["stdout"]
        assert not forked["sandbox"]["warnings"], forked["sandbox"]["warnings"]
        print("ok   judged again, a file finds what its earlier run left in Triton's cache "
              "(started and forked harness)")

        other = os.path.join(tmp, "plant_other.py")
        with open(other, "w") as f:
            f.write(read(plant) + "# one comment more: another source, another scope\n")
        moved = evaluate(args.kj, problem, other, env)
        assert moved["stdout"].startswith("cache: empty"), moved["stdout"]
        off = evaluate(args.kj, problem, plant, env, "--no-compile-cache")
        assert off["stdout"].startswith("cache: empty") and "compile_cache" not in off, off
        print("ok   another source finds nothing; --no-compile-cache gives nothing")

        inline = os.path.join(here, "inline_cpp.py")
        built = evaluate(args.kj, problem, inline, env)
        names = [os.path.basename(p) for p in
                 os.popen(f"find {tmp}/cache -path '*torch_extensions*' -type f").read().split()]
        assert "kj_cache_vadd.so" in names and built["compile_cache"]["stored"] >= 3, (
            built["compile_cache"], names)
        reused = evaluate(args.kj, problem, inline, env)
        assert reused["compile_cache"]["restored"] >= 3, reused["compile_cache"]
        assert reused["compile_cache"]["reported"] == 0, (
            "the extension was built again", reused["compile_cache"])
        print(f"ok   an inline C++ extension built once ({built['sandbox']['wall_ns'] / 1e9:.1f} s "
              f"run), reused when judged again ({reused['sandbox']['wall_ns'] / 1e9:.1f} s run)")

        home, problems, server_env = server_home(args.root, "kj-compile-cache-serve-")
        server_env["KJ_COMPILE_CACHE"] = os.path.join(tmp, "server-cache")
        try:
            server = JudgeServer(args.kj, os.path.join(home, "kj.db"), problems, free_port(),
                                 server_env, rate_limit=20)
            api = Api(server.url)
            admin = server.admin_token
            users = {name: api.json("POST", "/api/admin/users", admin, {"name": name},
                                    expect=201)["token"] for name in ("alice", "bob")}

            def printed(token):
                sid = api.json("POST", "/api/submissions", token,
                               {"leaderboard": "vectoradd", "code": read(plant),
                                "file_name": "plant.py", "mode": "test"}, expect=201)["id"]
                assert api.wait_final(sid, token)["verdict"] == "accepted"
                full = api.json("GET", f"/api/submissions/{sid}", token)
                return full["runs"][0]["result"]["stdout"]

            assert printed(users["alice"]).startswith("cache: empty")
            assert printed(users["alice"]).startswith("cache: found")
            assert printed(users["bob"]).startswith("cache: empty"), "another user's cache"
            print("ok   kj serve: a user's second run of a file finds its first run's cache; "
                  "another user's run of the same file finds nothing")
        finally:
            if server is not None:
                server.stop()
            shutil.rmtree(home, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("compile cache e2e: all passed")


if __name__ == "__main__":
    main()
