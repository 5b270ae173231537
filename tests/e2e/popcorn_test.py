#!/usr/bin/env python3
"""popcorn-cli against `kj serve`: the requests popcorn-cli sends and the parsing it applies to the
answers, reproduced from its source, so a GPU MODE competitor can point POPCORN_API_URL at kj.

popcorn-cli cannot be built here from Debian's packaged Rust crates (bookworm has rustc 1.63 and
no ratatui; popcorn-cli needs clap 4.5 and ratatui 0.26), so `PopcornCli` below reproduces it
from gpu-mode/popcorn-cli at commit 886932de26ca186f1ba10028dcaa6a18da4bca1b (v1.3.23):

- src/service/mod.rs: create_client (the X-Popcorn-Cli-Id header), fetch_leaderboards,
  fetch_gpus, submit_solution_background (POST /submission/{lb}/{gpu}/{mode}, then polling
  get_user_submission until `done`; used for test, benchmark and leaderboard since v1.3.16),
  submit_solution_streaming (POST /{lb}/{gpu}/{mode} read as Server-Sent Events: `status`,
  `result`, `error`; every mode before v1.3.16, profile mode since), get_user_submissions,
  get_user_submission, delete_user_submission, format_submission_details and the error
  handling that prints `detail`;
- src/utils/mod.rs: get_popcorn_directives;
- src/cmd/auth.rs: run_auth's GET /auth/init (`state` is the CLI id);
- reqwest 0.11.27's multipart encoding (src/async_impl/multipart.rs): one part named `file` with
  the file name and no Content-Type, a boundary of four 16-digit hex groups, a Content-Length.

Requests go over a plain socket byte for byte as reqwest writes them (lower-case header names,
`accept: */*`); the one liberty is the poll interval (popcorn-cli waits 5 s between polls; here
0.5 s, which changes no request)."""

import argparse
import base64
import http.client
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_test import Api, JudgeServer, free_port, server_home  # noqa: E402


class PopcornError(Exception):
    """What popcorn-cli prints for a failed request: anyhow's message."""


class PopcornCli:
    def __init__(self, base_url, cli_id):
        self.base = base_url  # POPCORN_API_URL
        self.cli_id = cli_id
        parsed = urllib.parse.urlsplit(base_url)
        self.host, self.port = parsed.hostname, parsed.port

    # --- transport: what reqwest 0.11 puts on the wire ------------------------------------------

    def _send(self, method, path, body=b"", content_type=None):
        headers = []
        if self.cli_id is not None:
            headers.append(("x-popcorn-cli-id", self.cli_id))  # create_client's default header
        headers.append(("accept", "*/*"))
        if content_type:
            headers.append(("content-type", content_type))
        if body or method in ("POST",):
            headers.append(("content-length", str(len(body))))
        headers.append(("host", f"{self.host}:{self.port}"))
        head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers)
        sock = socket.create_connection((self.host, self.port), timeout=600)
        sock.sendall(head.encode() + b"\r\n" + body)
        response = http.client.HTTPResponse(sock, method=method)
        response.begin()
        return sock, response

    def _get(self, path):
        sock, response = self._send("GET", path)
        with sock:
            return response.status, response.reason, response.getheader("content-type", ""), \
                response.read()

    @staticmethod
    def _multipart_file(file_name, content):
        # reqwest: Form::new().part("file", Part::bytes(content).file_name(name))
        boundary = "-".join(f"{secrets.randbits(64):016x}" for _ in range(4))
        body = (f"--{boundary}\r\n"
                f'Content-Disposition: form-data; name="file"; filename="{file_name}"'
                "\r\n\r\n").encode() + content + f"\r\n--{boundary}--\r\n".encode()
        return body, f"multipart/form-data; boundary={boundary}"

    @staticmethod
    def _status_error(status, reason, text):
        # "Server returned status {}: {}", the detail when the body is JSON with one.
        try:
            detail = json.loads(text).get("detail")
        except (ValueError, AttributeError):
            detail = None
        return PopcornError(f"Server returned status {status} {reason}: "
                            f"{detail if isinstance(detail, str) else text.decode()}")

    # --- service/mod.rs -------------------------------------------------------------------------

    def fetch_leaderboards(self):
        status, reason, _, text = self._get("/leaderboards")
        if not 200 <= status < 300:
            raise PopcornError(f"Server returned status {status} {reason}: {text.decode()}")
        items = []
        for lb in json.loads(text):
            if not isinstance(lb.get("task"), dict) or not isinstance(lb.get("name"), str) \
                    or not isinstance(lb.get("description"), str):
                raise PopcornError("Invalid JSON structure")
            items.append((lb["name"], lb["description"]))
        return items

    def fetch_gpus(self, leaderboard):
        status, reason, _, text = self._get(f"/gpus/{leaderboard}")
        if not 200 <= status < 300:
            raise PopcornError(f"Server returned status {status} {reason}: {text.decode()}")
        gpus = json.loads(text)
        assert all(isinstance(g, str) for g in gpus), "Vec<String>"
        return gpus

    def get_user_submissions(self, leaderboard=None, limit=None):
        params = []
        if leaderboard is not None:
            params.append(f"leaderboard={leaderboard}")
        if limit is not None:
            params.append(f"limit={limit}")
        status, reason, _, text = self._get(
            "/user/submissions" + ("?" + "&".join(params) if params else ""))
        if not 200 <= status < 300:
            raise self._status_error(status, reason, text)
        return [{"id": s.get("id", 0), "leaderboard_name": s.get("leaderboard_name", ""),
                 "file_name": s.get("file_name", ""),
                 "submission_time": s.get("submission_time", ""), "done": s.get("done", False),
                 "runs": [{"gpu_type": r.get("gpu_type", ""), "score": parse_score(r.get("score"))}
                          for r in s.get("runs") or []]}
                for s in json.loads(text)]

    def get_user_submission(self, submission_id):
        status, reason, _, text = self._get(f"/user/submissions/{submission_id}")
        if not 200 <= status < 300:
            raise self._status_error(status, reason, text)
        sub = json.loads(text)
        job = sub.get("job")
        queue = sub.get("runner_queue")
        return {
            "id": sub.get("id", 0), "leaderboard_id": sub.get("leaderboard_id", 0),
            "leaderboard_name": sub.get("leaderboard_name", ""),
            "file_name": sub.get("file_name", ""),
            "user_id": sub["user_id"] if isinstance(sub.get("user_id"), str) else "",
            "submission_time": sub.get("submission_time", ""), "done": sub.get("done", False),
            "code": sub.get("code", ""),
            "runs": [{"start_time": r.get("start_time"), "end_time": r.get("end_time"),
                      "mode": r.get("mode", ""), "secret": r.get("secret", False),
                      "runner": r.get("runner", ""), "score": parse_score(r.get("score")),
                      "passed": r.get("passed", False)} for r in sub.get("runs") or []],
            "job": None if job is None else {"status": job.get("status"),
                                             "error": job.get("error")},
            "runner_queue": None if queue is None else {
                "runner": queue.get("runner"), "gpu": queue.get("gpu"),
                "queued_jobs": queue.get("queued_jobs")},
        }

    def delete_user_submission(self, submission_id):
        sock, response = self._send("DELETE", f"/user/submissions/{submission_id}")
        with sock:
            text = response.read()
        if not 200 <= response.status < 300:
            raise self._status_error(response.status, response.reason, text)
        return json.loads(text)

    def submit_solution(self, file_name, content, leaderboard, gpu, mode, log):
        if mode.lower() == "profile":
            return self.submit_solution_streaming(file_name, content, leaderboard, gpu, mode, log)
        return self.submit_solution_background(file_name, content, leaderboard, gpu, mode, log)

    def submit_solution_background(self, file_name, content, leaderboard, gpu, mode, log,
                                   poll_s=0.5, timeout_s=600):
        body, content_type = self._multipart_file(file_name, content)
        sock, response = self._send(
            "POST", f"/submission/{leaderboard.lower()}/{gpu}/{mode.lower()}", body, content_type)
        with sock:
            text = response.read()
        if not 200 <= response.status < 300:
            raise self._status_error(response.status, response.reason, text)
        accepted = json.loads(text)
        submission_id = (accepted.get("details") or {}).get("id")
        if not isinstance(submission_id, int):
            raise PopcornError("Server did not return a submission id")
        queue = runner_queue_summary(accepted.get("runner_queue"))
        log(f"Submission {submission_id} accepted. {queue}. Waiting for results..." if queue
            else f"Submission {submission_id} accepted. Waiting for results...")
        deadline = time.monotonic() + timeout_s
        while True:
            details = self.get_user_submission(submission_id)
            job_status = (details["job"] or {}).get("status") or (
                "done" if details["done"] else "pending")
            log(f"Submission {submission_id} status: {job_status}")
            if job_status in ("failed", "timed_out", "hacked"):
                error = (details["job"] or {}).get("error") or "No error details were provided"
                raise PopcornError(f"Submission {submission_id} {job_status}: {error}")
            if details["done"]:
                return format_submission_details(details), details
            if time.monotonic() > deadline:
                raise PopcornError(f"Timed out waiting for submission {submission_id}")
            time.sleep(poll_s)  # popcorn-cli polls every 5 s

    def submit_solution_streaming(self, file_name, content, leaderboard, gpu, mode, log):
        body, content_type = self._multipart_file(file_name, content)
        sock, response = self._send(
            "POST", f"/{leaderboard.lower()}/{gpu}/{mode.lower()}", body, content_type)
        with sock:
            if not 200 <= response.status < 300:
                raise self._status_error(response.status, response.reason, response.read())
            if not (response.getheader("content-type") or "").startswith("text/event-stream"):
                result = json.loads(response.read())
                if "results" not in result:
                    raise PopcornError("Invalid non-streaming response structure")
                return json.dumps(result["results"], indent=2), result
            buffer = ""
            while True:
                chunk = response.read1(65536)
                if not chunk:
                    break
                buffer += chunk.decode("utf-8", errors="replace")
                while "\n\n" in buffer:
                    pos = buffer.index("\n\n")
                    message, buffer = buffer[:pos + 2], buffer[pos + 2:]
                    event = data = None
                    for line in message.splitlines():
                        if line.startswith("event:"):
                            event = line[len("event:"):].strip()
                        elif line.startswith("data:"):
                            data = line[len("data:"):].strip()
                    if event is None or data is None:
                        continue
                    if event == "status":
                        try:
                            value = json.loads(data)
                            log(value["message"] if isinstance(value, dict) and isinstance(
                                value.get("message"), str) else data)
                        except ValueError:
                            log(data)
                    elif event == "result":
                        result = json.loads(data)  # serde_json::from_str(data)?
                        mode_key = mode.lower()
                        for i, item in enumerate(result.get("results") or []):
                            if mode_key == "profile":
                                for key, run_data in (item.get("runs") or {}).items():
                                    if key.startswith("profile"):
                                        self.handle_profile_result(log, run_data, i, key)
                                continue
                            run = ((item.get("runs") or {}).get(mode_key) or {}).get("run")
                            if isinstance(run, dict):
                                if run.get("stdout"):
                                    log(f"STDOUT (Run {i + 1}):\n{run['stdout']}")
                                if run.get("stderr"):
                                    log(f"STDERR (Run {i + 1}):\n{run['stderr']}")
                        if "reports" in result:
                            # reports.to_string(): serde_json's compact form
                            return json.dumps(result["reports"], separators=(",", ":"),
                                              ensure_ascii=False), result
                        return json.dumps(result, indent=2), result
                    elif event == "error":
                        value = json.loads(data)
                        message = "Server processing error: " + (
                            value.get("detail") if isinstance(value.get("detail"), str)
                            else "Unknown server error")
                        if isinstance(value.get("status_code"), int):
                            message += f" (Status Code: {value['status_code']})"
                        raise PopcornError(message)
                    else:
                        log(f"Ignoring unknown SSE event: {event}")
        raise PopcornError("Stream ended unexpectedly without a final result or error event.")

    def handle_profile_result(self, log, run_data, result_idx, run_key):
        """service/mod.rs handle_profile_result: the profiler, stdout/stderr, each benchmark's
        base64 report, the base64 trace saved as profile_<time>_result<i>_<key>.zip in the
        current folder, and the download URL."""
        profile = run_data.get("profile")
        if not isinstance(profile, dict):
            return
        log(f"\n=== Profiler: {profile.get('profiler') or 'Unknown'} ===")
        run = run_data.get("run")
        if isinstance(run, dict):
            if run.get("stdout"):
                log(f"STDOUT:\n{run['stdout']}")
            if run.get("stderr"):
                log(f"STDERR:\n{run['stderr']}")
            result = run.get("result")
            if isinstance(result, dict):
                count = result.get("benchmark-count")
                for i in range(count if isinstance(count, int) else 0):
                    log(f"\nBenchmark: {result.get(f'benchmark.{i}.spec') or 'unknown'}")
                    encoded = result.get(f"benchmark.{i}.report")
                    if isinstance(encoded, str):
                        log("\n" + base64.b64decode(encoded, validate=True).decode())
        trace = profile.get("trace")
        if isinstance(trace, str) and trace:
            key = "".join(c if c.isalnum() or c in "_-" else "_" for c in run_key) or "profile"
            name = f"profile_{time.strftime('%Y%m%d_%H%M%S', time.gmtime())}_result{result_idx}_{key}.zip"
            with open(name, "wb") as f:
                f.write(base64.b64decode(trace, validate=True))
            log(f"\nSaved profile trace to: {name}")
        url = profile.get("download_url")
        if isinstance(url, str) and url:
            log(f"Download full profile: {url}")

    def get_url(self, url):
        """A GET with the client's headers (what a competitor runs on the printed URL)."""
        parsed = urllib.parse.urlsplit(url)
        assert (parsed.hostname, parsed.port) == (self.host, self.port), url
        return self._get(parsed.path)

    def auth_init(self, provider):
        status, reason, _, text = self._get(f"/auth/init?provider={provider}")
        if not 200 <= status < 300:
            raise PopcornError(f"Failed to initialize auth ({status} {reason}): {text.decode()}")
        return json.loads(text)["state"]


def parse_score(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def runner_queue_summary(queue):
    if not isinstance(queue, dict) or not isinstance(queue.get("queued_jobs"), int):
        return None
    n = queue["queued_jobs"]
    return (f"{queue.get('runner') or 'Runner'} {queue.get('gpu') or 'selected GPU'} queue: "
            f"{n} queued {'job' if n == 1 else 'jobs'}")


def format_submission_details(details):
    runs = [{"mode": r["mode"], "secret": r["secret"], "runner": r["runner"], "score": r["score"],
             "passed": r["passed"], "start_time": r["start_time"], "end_time": r["end_time"]}
            for r in details["runs"]]
    text = json.dumps({"submission_id": details["id"], "leaderboard": details["leaderboard_name"],
                       "file_name": details["file_name"], "done": details["done"],
                       "runs": runs}, indent=2)
    lines = [f"Geomean score{' (secret)' if r['secret'] else ' (public)'} on {r['runner']}: "
             f"{r['score']} s" for r in details["runs"]
             if r["mode"] == "leaderboard" and r["score"] is not None]
    return "\n".join(lines) + "\n\n" + text if lines else text


def get_popcorn_directives(content):
    """src/utils/mod.rs: lines starting with the marker, anywhere; keys in any case."""
    gpus, leaderboard = [], ""
    for line in content.splitlines():
        if not line.startswith("//") and not line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) < 2:
            continue
        if parts[0] in ("//!POPCORN", "#!POPCORN"):
            arg = parts[1].lower()
            if arg in ("gpu", "gpus"):
                gpus = parts[2:]
            elif arg == "leaderboard" and len(parts) > 2:
                leaderboard = parts[2]
    return leaderboard, gpus[:1]


def run_submit_plain(cli, path, mode, gpu=None, leaderboard=None):
    """src/cmd/submit.rs run_submit_plain: flags first, then the file's directives."""
    with open(path, "rb") as f:
        content = f.read()
    lb_directive, gpu_directive = get_popcorn_directives(content.decode())
    final_gpu = gpu or (gpu_directive[0] if gpu_directive else None)
    final_lb = leaderboard or lb_directive or None
    assert final_gpu and final_lb, "popcorn-cli refuses before any request"
    log = []
    return cli.submit_solution(os.path.basename(path), content, final_lb, final_gpu, mode,
                               log.append), log


def check_profile(server, alice, bob, bob_id, alice_id, code, tmp):
    """Profile mode through both APIs: popcorn-cli's streamed request saves the report (the
    trace zip) and prints the summary and the download URL; kj's /api serves the summary and
    the report; only the owner (and admins) get them."""
    log = []
    cwd = os.getcwd()
    os.chdir(tmp)  # popcorn-cli saves the trace in the current folder
    try:
        _, result = bob.submit_solution_streaming("submission.py", code, "vectoradd", "cpu",
                                                  "profile", log.append)
    finally:
        os.chdir(cwd)
    text = "\n".join(log)
    assert result["verdict"] == "accepted", result
    assert "=== Profiler: Nsight Compute ===" in text, text
    assert "fake_add_kernel" in text and "12.5" in text, text  # the summary, decoded
    saved = [line.split(": ", 1)[1] for line in log if line.startswith("\nSaved profile trace")]
    assert len(saved) == 1, log
    with zipfile.ZipFile(os.path.join(tmp, saved[0])) as trace:
        assert trace.testzip() is None and sorted(trace.namelist()) == [
            "ncu-details.txt", "profile.ncu-rep"], trace.namelist()
        report = trace.read("profile.ncu-rep")
        assert "fake_add_kernel" in trace.read("ncu-details.txt").decode()
    assert report.startswith(b"kj fake ncu report\n"), report[:100]
    url = next(line.split(": ", 1)[1] for line in log if line.startswith("Download full profile"))
    status, _, content_type, body = bob.get_url(url)
    assert status == 200 and body == report and content_type == "application/octet-stream", status
    status, _, _, body = alice.get_url(url)
    assert status == 403 and json.loads(body)["detail"].startswith("submission "), (status, body)

    # kj's own API and the submission page, with the same id as a Bearer token.
    api = Api(server.url)
    sid = result["submission_id"]
    summary = api.json("GET", f"/api/submissions/{sid}/profile", bob_id)
    assert summary["kernels"][0]["name"] == "fake_add_kernel(const float *, float *)", summary
    assert "fake_add_kernel" in summary["summary"] and summary["report"]["bytes"] == len(report)
    status, headers, body = api.call("GET", summary["report"]["url"], bob_id)
    assert status == 200 and body == report, status
    assert "attachment" in headers.get("Content-Disposition", ""), headers
    shown = api.json("GET", f"/api/submissions/{sid}", bob_id)
    assert shown["runs"][0]["profile_report"]["url"] == summary["report"]["url"], shown["runs"]
    api.error("GET", f"/api/submissions/{sid}/profile/report", alice_id, None, 403, "not_yours")
    api.error("GET", f"/api/submissions/{sid}/profile", None, None, 401, "missing_token")
    status, _, page = api.call("GET", f"/submissions/{sid}", bob_id)
    assert status == 200 and b'id="profile-report"' in page and b"fake_add_kernel" in page
    status, _, page = api.call("GET", f"/submissions/{sid}", alice_id)
    assert status == 403 and b"profile-report" not in page, status
    # A submission of another mode has no profile.
    other = alice.get_user_submissions("vectoradd", 1)[0]["id"]
    api.error("GET", f"/api/submissions/{other}/profile", alice_id, None, 404, "no_profile")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kj", required=True)
    parser.add_argument("--root", required=True)
    args = parser.parse_args()
    root = args.root
    tmp, problems, env = server_home(root, "kj-popcorn-test-")
    server = None
    try:
        db = os.path.join(tmp, "kj.db")
        # Profile mode on this CPU machine: a stand-in for Nsight Compute's ncu.
        env["KJ_NCU"] = os.path.join(root, "tests", "e2e", "fake_ncu.sh")
        server = JudgeServer(args.kj, db, problems, free_port(), env, rate_limit=100,
                             extra=["--popcorn-registration"])

        # An organizer issues a CLI id to a user (the server is running: the store is shared).
        issued = subprocess.run([args.kj, "cli-id", "alice", "--create", "--db", "sqlite:" + db],
                                capture_output=True, text=True, env=env, timeout=60)
        assert issued.returncode == 0, issued.stderr
        alice_id = issued.stdout.split("cli_id: ")[1].split()[0]
        assert subprocess.run([args.kj, "cli-id", "nobody", "--db", "sqlite:" + db],
                              capture_output=True, env=env).returncode == 2, "no such user"
        alice = PopcornCli(server.url, alice_id)

        # `popcorn register`, on a server with self-service registration turned on.
        registered = PopcornCli(server.url, None).auth_init("github")
        bob = PopcornCli(server.url, registered)

        # The TUI's menus: leaderboards (each with a task object) and their GPUs.
        boards = alice.fetch_leaderboards()
        assert [name for name, _ in boards] == ["vectoradd"], boards
        assert bob.fetch_gpus("vectoradd") == ["cpu"]

        correct_src = open(os.path.join(root, "problems", "vectoradd", "solutions", "correct",
                                        "pytorch.py")).read()
        wrong_src = open(os.path.join(root, "problems", "vectoradd", "solutions", "wrong",
                                      "subtract.py")).read()
        # Directives as competitors write them: after the imports, keys in capitals.
        correct = os.path.join(tmp, "submission.py")
        with open(correct, "w") as f:
            f.write(correct_src.replace("import torch\n",
                                        "import torch\n#!POPCORN LEADERBOARD vectoradd\n"
                                        "#!POPCORN GPU cpu\n", 1))
        wrong = os.path.join(tmp, "wrong.py")
        with open(wrong, "w") as f:
            f.write(wrong_src + "\n#!POPCORN leaderboard vectoradd\n#!POPCORN gpu cpu\n")

        # popcorn-cli 1.3.16+: test, benchmark and leaderboard through a background job.
        results, texts = {}, {}
        for mode in ("test", "benchmark", "leaderboard"):
            (texts[mode], details), log = run_submit_plain(alice, correct, mode)
            assert details["done"] and details["runs"], (mode, details)
            assert all(r["passed"] for r in details["runs"]), (mode, details)
            assert details["runs"][0]["mode"] == mode and details["runs"][0]["runner"] == "cpu"
            assert log[0].startswith(f"Submission {details['id']} accepted. kj cpu queue: "), log
            assert details["code"] == open(correct).read(), "show prints the submitted code"
            results[mode] = details
        text = texts["leaderboard"]
        assert text.startswith("Geomean score (public) on cpu: "), text
        assert "Geomean score (secret) on cpu: " in text, text

        # Before 1.3.16 (and profile mode since): one streamed request per submission.
        for mode in ("test", "benchmark", "leaderboard"):
            status = []
            reports, result = bob.submit_solution_streaming(
                "submission.py", open(correct, "rb").read(), "vectoradd", "cpu", mode,
                status.append)
            assert result["verdict"] == "accepted", result
            run = result["results"][0]["runs"][mode]["run"]
            assert run["passed"] and isinstance(run["stdout"], str), run
            assert reports.startswith('["submission ') and "accepted" in reports, reports
            if mode != "test":
                assert "median" in json.loads(reports)[0], reports
            assert status and status[0].startswith("submission "), status
            assert any(m.endswith(": judging on cpu") for m in status), status
            assert any(": verdict: accepted" in m for m in status), status
        reports, result = bob.submit_solution_streaming(
            "wrong.py", open(wrong, "rb").read(), "vectoradd", "cpu", "test", lambda _: None)
        assert result["verdict"] == "wrong_answer" and "wrong_answer" in reports, reports
        assert result["results"][0]["runs"]["test"]["run"]["passed"] is False

        check_profile(server, alice, bob, registered, alice_id, open(correct, "rb").read(), tmp)

        # Errors reach popcorn-cli as `detail`, and store nothing.
        before = len(alice.get_user_submissions("vectoradd", 1000))
        for attempt, expected in [
                (lambda: alice.submit_solution_background(
                    "submission.py", b"x = 1\n", "vectoradd", "H100", "test", print),
                 "Server returned status 400 Bad Request: leaderboard 'vectoradd' has no GPU type "
                 "'H100'"),
                (lambda: alice.submit_solution_streaming(
                    "submission.py", b"x = 1\n", "nosuchboard", "cpu", "test", print),
                 "Server returned status 404 Not Found: no leaderboard named 'nosuchboard'"),
                (lambda: alice.submit_solution_streaming(
                    "submission.py", b"x = 1\n", "vectoradd", "cpu", "fast", print),
                 "Server returned status 400 Bad Request: mode must be test, benchmark, "
                 "leaderboard or profile, not 'fast'"),
                (lambda: PopcornCli(server.url, "kj_" + "0" * 64).get_user_submissions(),
                 "Server returned status 401 Unauthorized: the CLI id in ~/.popcorn.yaml is "
                 "unknown"),
                (lambda: bob.get_user_submission(results["test"]["id"]),
                 "Server returned status 403 Forbidden: submission "),
        ]:
            try:
                attempt()
                raise AssertionError("expected a refusal: " + expected)
            except PopcornError as e:
                assert str(e).startswith(expected), (str(e), expected)
        assert len(alice.get_user_submissions("vectoradd", 1000)) == before

        # `popcorn submissions list | show | delete`.
        listed = alice.get_user_submissions("vectoradd", 50)
        assert [s["id"] for s in listed] == sorted((s["id"] for s in listed), reverse=True)
        ranked = next(s for s in listed if s["id"] == results["leaderboard"]["id"])
        assert ranked["done"] and min(r["score"] for r in ranked["runs"]) > 0, ranked
        assert {r["gpu_type"] for r in ranked["runs"]} == {"cpu"}
        shown = alice.get_user_submission(results["benchmark"]["id"])
        assert shown["leaderboard_name"] == "vectoradd" and shown["user_id"], shown
        assert alice.delete_user_submission(results["test"]["id"])["status"] == "ok"
        try:
            alice.get_user_submission(results["test"]["id"])
            raise AssertionError("a deleted submission is gone")
        except PopcornError as e:
            assert "404" in str(e), e
        assert len(alice.get_user_submissions("vectoradd", 1000)) == before - 1
        print("popcorn-cli's requests and parsing: ok")
    finally:
        if server:
            server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
