#!/usr/bin/env python3
"""kj bootstrap end to end on the CPU (Triton's interpreter), against a chat-completions server
written for this test that replies with prepared translations.

  outcomes: every row ends with the outcome its prepared replies deserve (correct, wrong,
            PyTorch-only, not compiling, fixed on the second turn, a failing PyTorch program, a
            line that is not JSON, an endpoint that fails once with 503), and the output loads
            with pandas.
  resume:   a run killed part-way and restarted writes the same rows.jsonl and rows.parquet as
            an uninterrupted run.
  corpus:   a subset of datasets/bootstrap-corpus (one of each kind) with its hand-written
            translations: every row accepted and timed (bench/bootstrap_corpus.sh runs it all).
"""
import argparse
import http.server
import json
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import threading
import time

TRITON_HEAD = "import torch\nimport triton\nimport triton.language as tl\n\n\n"


def unary(name: str, expression: str) -> str:
    return TRITON_HEAD + f'''@triton.jit
def {name}_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, {expression}, mask=mask)


def {name}_triton(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    {name}_kernel[(triton.cdiv(n, 256),)](x, out, n, BLOCK=256)
    return out
'''


def row_sum(expression: str) -> str:
    return TRITON_HEAD + f'''@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, {expression})


def row_sum_triton(x):
    x = x.contiguous()
    out = torch.empty(x.shape[0], device=x.device, dtype=x.dtype)
    row_sum_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return out
'''


def tests_for(name: str, shapes: list[str]) -> str:
    calls = "\n".join(f'    results["test_case_{i + 1}"] = {name}(torch.randn({s}))'
                      for i, s in enumerate(shapes))
    return (f"def test_{name}():\n    torch.manual_seed(42)\n    results = {{}}\n{calls}\n"
            f"    return results\n\n\ntest_results = test_{name}()\nprint(test_results)\n")


def program(name: str, body: str) -> str:
    return f"import torch\n\n\ndef {name}(x):\n    return {body}\n"


# name -> (pt_code, tests_code, replies by turn)
ROWS = {
    "relu": (program("relu", "torch.relu(x)"), tests_for("relu", ["1000", "7, 33"]),
             [unary("relu", "tl.maximum(x, 0.0)")]),
    "sigmoid": (program("sigmoid", "torch.sigmoid(x)"), tests_for("sigmoid", ["500"]),
                [unary("sigmoid", "x * 0.5"), unary("sigmoid", "x * 0.25 + 0.5")]),
    "silu": (program("silu", "torch.nn.functional.silu(x)"), tests_for("silu", ["300"]),
             [TRITON_HEAD.replace("import triton\n", "") +
              "def silu_triton(x):\n    return x * torch.sigmoid(x)\n"]),
    "negate": (program("negate", "-x"), tests_for("negate", ["300"]),
               [unary("negate", "-x").replace("def negate_triton(x):", "def negate_triton(x)")]),
    "row_sum": (program("row_sum", "x.sum(dim=1)"), tests_for("row_sum", ["8, 100", "3, 5"]),
                [row_sum("tl.max(x, axis=0)"), row_sum("tl.sum(x, axis=0)")]),
    "broken": ("import torch\n\n\ndef broken(x):\n    return x.no_such_method()\n",
               tests_for("broken", ["10"]), []),
}
# Row id -> verdict, pass_turn, turns, pt_code_runs
EXPECTED = {
    "relu": ("accepted", 1, 1, True),
    "sigmoid": ("wrong_answer", None, 2, True),
    "silu": ("compile_error", None, 2, True),
    "negate": ("compile_error", None, 2, True),
    "row_sum": ("accepted", 2, 2, True),
    "broken": ("pt_failed", None, 0, False),
}


class ChatServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), ChatHandler)
        self.lock = threading.Lock()
        self.requests = 0
        self.failed_once = False


class ChatHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        server: ChatServer = self.server
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        assert self.path == "/v1/chat/completions", self.path
        assert self.headers.get("Authorization") == "Bearer test-key", self.headers
        with server.lock:
            server.requests += 1
            fail = not server.failed_once
            server.failed_once = True
        if fail:  # the first request of a run fails once: the client must retry
            self.send_response(503)
            self.end_headers()
            return
        messages = body["messages"]
        first = messages[0]["content"]
        turn = sum(1 for m in messages if m["role"] == "assistant")
        name = next(n for n, (pt, _, _) in ROWS.items() if pt.strip() in first)
        replies = ROWS[name][2]
        code = replies[min(turn, len(replies) - 1)]
        reply = {"choices": [{"finish_reason": "stop", "message": {
            "role": "assistant", "content": f"Here it is.\n\n```python\n{code}```\n",
            "reasoning_content": f"{name}, turn {turn + 1}"}}]}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def write_corpus(path: pathlib.Path, names: list[str], junk_line: bool) -> None:
    lines = [json.dumps({"id": n, "entrypoint": n, "pt_code": ROWS[n][0], "tests_code": ROWS[n][1]})
             for n in names]
    if junk_line:
        lines.insert(2, "this line is not JSON")
    path.write_text("\n".join(lines) + "\n")


def kj_command(kj: str, corpus: pathlib.Path, out: pathlib.Path, url: str, root: str) -> list:
    return [kj, "bootstrap", str(corpus), "--out", str(out), "--translator-url", url,
            "--model", "prepared", "--api-key-env", "KJ_TEST_KEY", "--backoff", "0.05",
            "--turns", "2", "--random-inputs", "2", "--concurrency", "3", "--no-timing",
            "--harness", os.path.join(root, "harness")]


def fail(message: str) -> None:
    print("FAIL:", message)
    sys.exit(1)


def check_outcomes(kj: str, root: str, work: pathlib.Path, url: str) -> None:
    corpus = work / "corpus.jsonl"
    write_corpus(corpus, list(ROWS), junk_line=True)
    out = work / "out"
    run = subprocess.run(kj_command(kj, corpus, out, url, root), capture_output=True, text=True,
                         timeout=600)
    print(run.stderr[-3000:], run.stdout)
    if run.returncode != 0:
        fail(f"kj bootstrap exited {run.returncode}")
    rows = [json.loads(line) for line in (out / "rows.jsonl").read_text().splitlines()]
    by_id = {r["row_id"]: r for r in rows}
    if len(rows) != len(ROWS) + 1:
        fail(f"{len(rows)} rows, expected {len(ROWS) + 1} (one per corpus line)")
    unparsed = [r for r in rows if r["verdict"] == "unparsed"]
    if len(unparsed) != 1 or "not JSON" not in unparsed[0]["reason"]:
        fail(f"the junk line is not recorded as unparsed: {unparsed}")
    for name, (verdict, pass_turn, turns, runs) in EXPECTED.items():
        row = by_id[name]
        got = (row["verdict"], row["pass_turn"], row["turns"], row["pt_code_runs"])
        if got != (verdict, pass_turn, turns, runs):
            fail(f"{name}: got {got}, expected {(verdict, pass_turn, turns, runs)}: {row['reason']}")
        if len(row["messages"]) != 2 * turns:
            fail(f"{name}: {len(row['messages'])} messages for {turns} turns")
    if "Triton" not in by_id["silu"]["reason"] and "triton" not in by_id["silu"]["reason"]:
        fail(f"silu (PyTorch only) not rejected for lacking a Triton kernel: {by_id['silu']['reason']}")
    if "SyntaxError" not in json.dumps(by_id["negate"]["messages"]) + by_id["negate"]["reason"]:
        fail(f"negate (does not compile) is not reported as a SyntaxError: {by_id['negate']['reason']}")
    repair = by_id["row_sum"]["messages"][2]
    if repair["role"] != "user" or "differ" not in repair["content"]:
        fail(f"the repair turn does not carry the mismatch: {repair}")
    if by_id["row_sum"]["reasoning"] != "row_sum, turn 2" or by_id["row_sum"]["stop_reason"] != "stop":
        fail(f"reasoning/stop_reason not recorded: {by_id['row_sum']['reasoning']!r}")
    if "test_case_1" not in by_id["relu"]["stdout"]:
        fail(f"relu's stdout is not its printed test results: {by_id['relu']['stdout'][:200]!r}")
    if "AttributeError" not in by_id["broken"]["stderr"]:
        fail(f"broken's stderr lacks its traceback: {by_id['broken']['stderr'][-300:]!r}")
    if not isinstance(by_id["relu"]["max_error"], float):
        fail("relu has no max_error")
    summary = json.loads((out / "summary.json").read_text())
    if (summary["pass_at_1"], summary["pass_at_n"], summary["translated"]) != (1, 2, 5):
        fail(f"summary: {summary}")
    import pandas

    frame = pandas.read_parquet(out / "rows.parquet")
    if len(frame) != len(rows) or "verdict" not in frame.columns or "triton_code" not in frame.columns:
        fail(f"rows.parquet: {frame.shape} {list(frame.columns)}")
    if list(frame["verdict"]) != [r["verdict"] for r in rows]:
        fail("rows.parquet's verdicts differ from rows.jsonl's")
    pandas.read_json(out / "rows.jsonl", lines=True)
    print("outcomes: ok")


def check_resume(kj: str, root: str, work: pathlib.Path, url: str) -> None:
    names = ["relu", "row_sum", "negate", "broken"]
    corpus = work / "corpus.jsonl"
    write_corpus(corpus, names, junk_line=False)
    whole = work / "whole"
    # The uninterrupted run starts an interpreter per step (--no-zygote), the resumed one forks
    # every step from its lanes' zygotes: their rows must be the same bytes (the PyTorch
    # program's stdout and stderr among them).
    run = subprocess.run(kj_command(kj, corpus, whole, url, root) + ["--no-zygote"],
                         capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        print(run.stderr)
        fail("the uninterrupted run failed")
    parted = work / "parted"
    command = kj_command(kj, corpus, parted, url, root)
    command[command.index("--concurrency") + 1] = "1"
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    journal = parted / "journal.jsonl"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if journal.exists() and len(journal.read_text().splitlines()) >= 2:
            break
        if process.poll() is not None:
            fail("the run ended before it could be interrupted")
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    finished = len(journal.read_text().splitlines())
    if finished >= len(names) or (parted / "rows.jsonl").exists():
        fail(f"the run was not interrupted part-way ({finished} rows finished)")
    run = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if run.returncode != 0 or f"{finished} already finished" not in run.stderr:
        print(run.stderr)
        fail("the restarted run did not resume from the journal")
    if (whole / "rows.jsonl").read_bytes() != (parted / "rows.jsonl").read_bytes():
        fail("rows.jsonl differs between the uninterrupted and the interrupted-then-resumed run")
    if (whole / "summary.json").read_bytes() != (parted / "summary.json").read_bytes():
        fail("summary.json differs")
    import pandas

    a = pandas.read_parquet(whole / "rows.parquet")
    b = pandas.read_parquet(parted / "rows.parquet")
    if not a.equals(b):
        fail("rows.parquet differs")
    print(f"resume: ok (interrupted after {finished} of {len(names)} rows)")


CORPUS_SUBSET = ["softmax", "layer_norm", "matmul_bias_relu", "row_argmax", "total_sum"]


def check_corpus(kj: str, root: str, work: pathlib.Path) -> None:
    corpus_dir = pathlib.Path(root) / "datasets" / "bootstrap-corpus"
    rows = [line for line in (corpus_dir / "corpus.jsonl").read_text().splitlines()
            if json.loads(line)["id"] in CORPUS_SUBSET]
    (work / "subset.jsonl").write_text("\n".join(rows) + "\n")
    kb = work / "kernelbench"
    kb.mkdir()
    (kb / "40_LayerNorm.py").write_text((corpus_dir / "kernelbench" / "40_LayerNorm.py").read_text())
    common = ["--translator-command", f"{sys.executable} {corpus_dir / 'translate.py'}",
              "--turns", "1", "--random-inputs", "1", "--concurrency", "3", "--max-repeats", "3",
              "--max-time", "1", "--harness", os.path.join(root, "harness")]
    for corpus, out, count in ((work / "subset.jsonl", work / "fn", len(CORPUS_SUBSET)),
                               (kb, work / "kb", 1)):
        run = subprocess.run([kj, "bootstrap", str(corpus), "--out", str(out)] + common,
                             capture_output=True, text=True, timeout=600)
        print(run.stderr[-2000:], run.stdout)
        rows = [json.loads(line) for line in (out / "rows.jsonl").read_text().splitlines()]
        if len(rows) != count:
            fail(f"{corpus}: {len(rows)} rows, expected {count}")
        for row in rows:
            if row["verdict"] != "accepted" or not row["speedup"] or row["speedup"] <= 0:
                fail(f"{row['row_id']}: {row['verdict']} ({row['reason']}), speedup {row['speedup']}")
    print("corpus: ok")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kj", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("part", choices=["outcomes", "resume", "corpus"])
    args = parser.parse_args()
    os.environ["KJ_TEST_KEY"] = "test-key"
    server = ChatServer()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    with tempfile.TemporaryDirectory(prefix="kj-bootstrap-test-") as tmp:
        if args.part == "outcomes":
            check_outcomes(args.kj, args.root, pathlib.Path(tmp), url)
        elif args.part == "resume":
            check_resume(args.kj, args.root, pathlib.Path(tmp), url)
        else:
            check_corpus(args.kj, args.root, pathlib.Path(tmp))
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
