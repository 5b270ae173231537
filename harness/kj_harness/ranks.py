"""The ranks of a multi-rank (multi_gpu) evaluation: one harness per rank, each in its own
sandbox, all in one network namespace that holds nothing but loopback (docs/multi-gpu.md).

Three process groups join the ranks, on fixed loopback ports (the namespace is the run's own):
the harnesses' (this module: a TCPStore for lockstep and agreement, and a torch.distributed
group for references whose checks use collectives), the submission runners' and the reference
runners'. The submission's run has no reference runner, the reference's run (mode `reference`,
timed alone after it) no submission runner: a group nobody joins is never formed. Every rank
makes the same calls in the same order; after each step the harnesses exchange whether their
rank passed, so one rank's failure stops the others at the next step.
What each harness reports still goes to its own result fd only; the judge merges the ranks.
"""

from __future__ import annotations

import json
import time
from datetime import timedelta

# A wait longer than this at a step emits a "waiting" event naming the ranks not there yet.
WAITING_AFTER_S = 1.0
# How long rank 0 keeps the store up for the other ranks to read the last step.
LINGER_S = 5.0


class PeerFailed(Exception):
    """Another rank failed at this step: this rank stops without a failure of its own."""

    def __init__(self, ranks: list[int]):
        super().__init__(f"rank {', '.join(map(str, ranks))} failed")
        self.ranks = ranks


class Ranks:
    def __init__(self, config: dict, reporter):
        self.rank = int(config["rank"])
        self.world_size = int(config["world_size"])
        self.backend = str(config.get("backend", "gloo"))
        self.ports = {name: int(port) for name, port in config["ports"].items()}
        self.timeout = timedelta(seconds=float(config.get("timeout_s", 600)))
        self.report = reporter
        self.store = None
        self.step = 0

    def runner_config(self, runner: str) -> dict:
        """What a runner needs to join its own group (submission or reference)."""
        return {"rank": self.rank, "world_size": self.world_size, "backend": self.backend,
                "port": self.ports[runner], "timeout_s": self.timeout.total_seconds()}

    def connect(self) -> None:
        """The harnesses' store and process group; after the runners were forked (a store's
        server thread and a gloo context do not survive fork)."""
        import torch.distributed as dist

        self.store = dist.TCPStore("127.0.0.1", self.ports["harness"], self.world_size,
                                   self.rank == 0, timeout=self.timeout)
        # For references whose check_implementation runs collectives (reference-kernels' style).
        dist.init_process_group(self.backend, store=dist.PrefixStore("pg", self.store),
                                rank=self.rank, world_size=self.world_size, timeout=self.timeout)

    def _key(self, step: int, rank: int) -> str:
        return f"step/{step}/{rank}"

    def exchange(self, ok: bool, value=None) -> list:
        """One step in lockstep: publishes whether this rank passed (and a value), waits for
        every rank, returns their values. A rank that failed publishes and returns at once.
        Raises PeerFailed when this rank passed and another did not."""
        step = self.step
        self.step += 1
        self.store.set(self._key(step, self.rank), json.dumps([bool(ok), value]))
        if not ok:
            return []
        keys = [self._key(step, r) for r in range(self.world_size)]
        reported = False
        begin = time.monotonic()
        while True:
            try:
                self.store.wait(keys, timedelta(seconds=WAITING_AFTER_S))
                break
            except Exception:  # noqa: BLE001 - the store's timeout error type varies by version
                try:
                    missing = [r for r in range(self.world_size)
                               if not self.store.check([self._key(step, r)])]
                except Exception:  # noqa: BLE001 - rank 0's harness, the store's server, ended
                    raise PeerFailed([0]) from None
                if reported:
                    continue
                self.report.emit("waiting", rank=self.rank, ranks=missing, step=step,
                                 waited_s=round(time.monotonic() - begin, 3))
                reported = True
        values = [json.loads(self.store.get(key)) for key in keys]
        failed = [r for r, (passed, _) in enumerate(values) if not passed]
        if failed:
            raise PeerFailed(failed)
        return [value for _, value in values]

    def agree(self, ok: bool) -> bool:
        """True when every rank passed; False when this one failed (it reported why)."""
        self.exchange(ok)
        return ok

    def leave(self, passed: bool) -> None:
        """Ends this rank's part: after a failure the others' next step sees it failed rather
        than waiting. Rank 0 serves the store, so it stays until every rank left (or a while)."""
        if self.store is None:
            return
        try:
            if not passed:
                self.store.set(self._key(self.step, self.rank), json.dumps([False, None]))
            self.store.set(f"left/{self.rank}", "1")
            if self.rank == 0:
                self.store.wait([f"left/{r}" for r in range(self.world_size)],
                                timedelta(seconds=LINGER_S))
        except Exception:  # noqa: BLE001 - a rank that never left, or rank 0 already gone
            pass


def init_runner_group(config: dict, device: str) -> None:
    """In a runner, before the submission (or reference) is imported: the default process
    group its collectives use."""
    import torch
    import torch.distributed as dist

    if device.startswith("cuda"):
        torch.cuda.set_device(torch.device(device))
    dist.init_process_group(
        str(config["backend"]), init_method=f"tcp://127.0.0.1:{int(config['port'])}",
        rank=int(config["rank"]), world_size=int(config["world_size"]),
        timeout=timedelta(seconds=float(config["timeout_s"])))
