#!/usr/bin/env python3
"""The judge's web pages in a real browser: headless Chromium driven over chromedriver's W3C
WebDriver HTTP API (standard library only). `kj serve` (SQLite, CPU worker) on a copy of
vectoradd; the leaderboard page renders; a submission page opened while the job waits turns to
`accepted` without a reload; the ranked user appears on the leaderboard; a submission's stdout
with markup is shown as text. Prints "skip" and exits 0 only when Chromium or chromedriver is not
installed (scripts/setup.sh installs both)."""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_test import Api, JudgeServer, free_port, read, server_home  # noqa: E402

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # the W3C element reference key
FINAL_VERDICT_TIMEOUT = 120


def find_browser():
    chromedriver = shutil.which("chromedriver")
    chromium = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                     if shutil.which(n)), None)
    return chromedriver, chromium


class Browser:
    """One chromedriver process and one headless Chromium session, spoken to over HTTP."""

    def __init__(self, chromedriver, chromium, workdir):
        self.port = free_port()
        self.log = open(os.path.join(workdir, "chromedriver.log"), "w")
        self.proc = subprocess.Popen([chromedriver, f"--port={self.port}"], stdout=self.log,
                                     stderr=subprocess.STDOUT)
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                if self._call("GET", "/status")["value"].get("ready"):
                    break
            except (urllib.error.URLError, ConnectionError):
                pass
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError("chromedriver did not become ready")
            time.sleep(0.1)  # polling chromedriver's status, with a deadline
        options = {"binary": chromium,
                   "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                            "--disable-dev-shm-usage", f"--user-data-dir={workdir}/profile"]}
        session = self._call("POST", "/session", {"capabilities": {"alwaysMatch": {
            "browserName": "chrome", "goog:chromeOptions": options}}})
        self.session = session["value"]["sessionId"]

    def _call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as e:
            raise AssertionError(f"WebDriver {method} {path}: {e.code} {e.read()[:500]!r}")

    def _session(self, method, path, body=None):
        return self._call(method, f"/session/{self.session}{path}", body)["value"]

    def open(self, url):
        self._session("POST", "/url", {"url": url})

    def script(self, source, *args):
        return self._session("POST", "/execute/sync", {"script": source, "args": list(args)})

    def elements(self, css):
        found = self._session("POST", "/elements", {"using": "css selector", "value": css})
        return [e[ELEMENT] for e in found]

    def text(self, css):
        found = self.elements(css)
        assert found, f"no element matches {css!r} on {self.script('return location.href')}"
        return self._session("GET", f"/element/{found[0]}/text")

    def wait_text(self, css, predicate, timeout, what):
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            if self.elements(css):
                last = self.text(css)
                if predicate(last):
                    return last
            time.sleep(0.2)  # polling the DOM, with a deadline
        raise AssertionError(f"{what}: {css!r} still reads {last!r} after {timeout} s")

    def close(self):
        try:
            self._call("DELETE", f"/session/{self.session}")
        except Exception:  # the browser may already be gone; the process is stopped below
            pass
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kj", required=True)
    parser.add_argument("--root", required=True)
    args = parser.parse_args()
    chromedriver, chromium = find_browser()
    if not chromedriver or not chromium:
        print("skip: chromium and chromedriver are not installed (scripts/setup.sh installs the "
              "Debian packages chromium and chromium-driver)")
        return 0
    root = args.root
    tmp, problems, env = server_home(root, "kj-browser-test-")
    server = browser = None
    try:
        env["KJ_NCU"] = os.path.join(root, "tests", "e2e", "fake_ncu.sh")  # profile mode on a CPU
        server = JudgeServer(args.kj, os.path.join(tmp, "kj.db"), problems, free_port(), env)
        api = Api(server.url)
        alice = api.json("POST", "/api/admin/users", server.admin_token, {"name": "alice"},
                         expect=201)["token"]
        code = read(os.path.join(root, "problems", "vectoradd", "solutions", "correct",
                                 "pytorch.py"))

        browser = Browser(chromedriver, chromium, tmp)
        # The leaderboard page renders before anyone is ranked.
        browser.open(server.url + "/leaderboards/vectoradd?gpu=cpu")
        assert browser.text("h1") == "vectoradd"
        assert "Nobody is ranked" in browser.text("#empty")
        browser.open(server.url + "/")
        assert "vectoradd" in browser.text("#leaderboards")

        # Queue order on the one CPU worker: a ranked run first, then one that prints markup,
        # then the one watched live, which therefore waits while its page is open.
        def submit(source, mode, file_name):
            return api.json("POST", "/api/submissions", alice,
                            {"leaderboard": "vectoradd", "code": source, "mode": mode,
                             "file_name": file_name}, expect=201)["id"]
        ranked = submit(code, "leaderboard", "ranked.py")
        injected = ("print('<script>window.kjInjected = 1</script><b id=\"kj-injected\">x</b>')\n"
                    + code)
        printing = submit(injected, "test", "printing.py")
        live = submit(code, "test", "live.py")

        # Logged in once through ?token=, which sets the cookie; then the live page.
        browser.open(server.url + "/login?token=" + alice)
        assert browser.text("header .who").startswith("alice"), browser.text("header")
        browser.open(server.url + f"/submissions/{live}")
        first = browser.text("#verdict")
        assert first in ("queued", "running"), f"the watched job was already final: {first!r}"
        status = browser.text("#status")
        if status.startswith("queued"):  # behind the ranked and the printing runs: its place
            assert re.fullmatch(r"queued, place [123] in the cpu queue", status), status
        browser.script("window.kjSamePage = 'not reloaded';")
        final = browser.wait_text("#verdict", lambda t: t not in ("queued", "running"),
                                  FINAL_VERDICT_TIMEOUT, "live verdict")
        assert final == "accepted", final
        assert browser.script("return window.kjSamePage") == "not reloaded", "the page reloaded"
        browser.wait_text("#details", lambda t: "passed" in t, 30, "details after the result")
        steps = [li.strip() for li in browser.script(
            "return Array.from(document.querySelectorAll('#progress li')).map(e => e.textContent)")]
        assert steps, "progress events were listed"
        assert not any(step.startswith("{") for step in steps), f"raw JSON on the page: {steps}"
        assert "Judging on cpu" in steps, steps
        assert any(step.startswith("Verdict: accepted — ") for step in steps), steps
        assert any(step.startswith("Evaluation finished in ") for step in steps), steps

        # The ranked user is on the leaderboard with a formatted score.
        api.wait_final(ranked, alice, timeout=300)
        assert api.json("GET", f"/api/submissions/{ranked}", alice)["verdict"] == "accepted"
        browser.open(server.url + "/leaderboards/vectoradd?gpu=cpu")
        assert browser.text("#ranking tr.ranked td.user") == "alice"
        score = browser.text("#ranking tr.ranked td.score")
        assert score.endswith(("ns", "µs", "ms", " s")), score
        browser.open(server.url + "/users/alice")
        assert browser.elements("svg.chart polyline"), "the best-score chart is drawn"
        # Logged out, the ranked score the leaderboard shows is on the user's chart too.
        status, _, body = api.call("GET", "/users/alice")
        assert status == 200 and b'<svg class="chart"' in body, body[:2000]
        assert b"No accepted ranked submissions yet" not in body

        # Profile mode: the summary on the page, and the report downloads with the cookie.
        profiled = submit(code, "profile", "profiled.py")
        assert api.wait_final(profiled, alice)["verdict"] == "accepted"
        browser.open(server.url + f"/submissions/{profiled}")
        assert "fake_add_kernel" in browser.text("#profile-summary")
        status, head = browser.script(
            "var x = new XMLHttpRequest();"
            "x.open('GET', document.getElementById('profile-report').href, false); x.send();"
            "return [x.status, x.responseText.slice(0, 18)];")
        assert (status, head) == (200, "kj fake ncu report"), (status, head)

        # Markup in a submission's stdout is text on the page, never markup or script.
        assert api.wait_final(printing, alice)["verdict"] == "accepted"
        browser.open(server.url + f"/submissions/{printing}")
        assert "<script>window.kjInjected = 1</script>" in browser.text("#stdout")
        assert not browser.elements("#kj-injected"), "stdout became markup"
        assert browser.script("return window.kjInjected === undefined"), "stdout ran as script"

        # Another user's submission is not shown before the deadline; anonymous readers log in.
        bob = api.json("POST", "/api/admin/users", server.admin_token, {"name": "bob"},
                       expect=201)["token"]
        status, _, body = api.call("GET", f"/submissions/{live}", bob)
        assert status == 403 and b"live.py" not in body, status
        status, _, body = api.call("GET", f"/submissions/{live}")
        assert status == 401 and b'action="/login"' in body, status
        print("browser e2e: all checks passed")
        return 0
    finally:
        if browser:
            browser.close()
        if server:
            server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
