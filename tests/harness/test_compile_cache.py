"""The harness's side of the compile cache: a given cache is put where Triton and torch's
extension builder look, with its files' times exact; what a run compiled anew, and only that, is
reported; a torch extension built by another toolchain is not restored. Needs torch (run with the
harness interpreter)."""

import base64
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "harness"))

from kj_harness import compile_cache  # noqa: E402


def entry(path, data, mtime_ns, executable=False):
    return {"path": path, "mtime_ns": mtime_ns, "executable": executable,
            "data": base64.b64encode(data).decode()}


class CompileCacheTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.triton = os.path.join(self.tmp.name, "triton")
        self.extensions = os.path.join(self.tmp.name, "ext")
        self.old_env = {k: os.environ.get(k) for k in compile_cache.ROOTS.values()}
        os.environ["TRITON_CACHE_DIR"] = self.triton
        os.environ["TORCH_EXTENSIONS_DIR"] = self.extensions
        self.addCleanup(self.restore_env)

    def restore_env(self):
        for key, value in self.old_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    def given(self, files):
        path = os.path.join(self.tmp.name, "entries.json")
        with open(path, "w") as f:
            json.dump({"files": files}, f)
        return path

    def test_restored_files_keep_their_times_and_modes_and_are_not_reported_again(self):
        when = 1_700_000_000_123_456_789
        fingerprint = compile_cache.fingerprint().encode()
        given = self.given([
            entry("triton/KEY/add.cubin", b"cubin", when),
            entry("torch_extensions/vadd/vadd.so", b"\x7fELF", when, executable=True),
            entry("torch_extensions/vadd/.kj-fingerprint", fingerprint, 0),
        ])
        account = compile_cache.restore(given)
        self.assertEqual(account["offered"], 3)
        self.assertEqual(account["restored"], 2)
        so = os.path.join(self.extensions, "vadd", "vadd.so")
        self.assertEqual(os.stat(so).st_mtime_ns, when)
        self.assertTrue(os.access(so, os.X_OK))
        with open(os.path.join(self.triton, "KEY", "add.cubin"), "rb") as f:
            self.assertEqual(f.read(), b"cubin")
        # Nothing compiled: nothing to report.
        self.assertEqual(compile_cache.collect(account["files"])["files"], [])
        # A rebuilt extension file is reported, with the extension's fingerprint.
        with open(so, "wb") as f:
            f.write(b"\x7fELF rebuilt")
        reported = {f["path"]: f for f in compile_cache.collect(account["files"])["files"]}
        self.assertEqual(set(reported), {"torch_extensions/vadd/vadd.so",
                                         "torch_extensions/vadd/.kj-fingerprint"})
        self.assertEqual(base64.b64decode(reported["torch_extensions/vadd/vadd.so"]["data"]),
                         b"\x7fELF rebuilt")

    def test_an_extension_built_by_another_toolchain_is_built_again(self):
        given = self.given([
            entry("torch_extensions/vadd/vadd.so", b"old", 1),
            entry("torch_extensions/vadd/.kj-fingerprint", b"another torch", 0),
            entry("torch_extensions/other/other.so", b"no fingerprint", 1),
        ])
        account = compile_cache.restore(given)
        self.assertEqual(account["restored"], 0)
        self.assertEqual(account["stale"], 2)
        self.assertFalse(os.path.exists(os.path.join(self.extensions, "vadd", "vadd.so")))

    def test_paths_outside_the_caches_are_not_written(self):
        given = self.given([entry("triton/../../escape/x", b"x", 1), entry("other/a/b", b"x", 1),
                            entry("triton/a", b"x", 1), entry("/abs/a/b", b"x", 1)])
        self.assertEqual(compile_cache.restore(given)["restored"], 0)
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "escape")))

    def test_no_cache_file_means_an_empty_cache(self):
        account = compile_cache.restore(os.path.join(self.tmp.name, "missing.json"))
        self.assertEqual(account["restored"], 0)
        self.assertEqual(account["files"], {})

    def test_locks_and_half_written_files_are_not_reported(self):
        os.makedirs(os.path.join(self.extensions, "vadd"))
        os.makedirs(os.path.join(self.triton, "KEY", "tmp.pid_1_abc"))
        for path in [os.path.join(self.extensions, "vadd", "lock"),
                     os.path.join(self.triton, "KEY", "tmp.pid_1_abc", "add.cubin"),
                     os.path.join(self.triton, "KEY", "add.json")]:
            with open(path, "w") as f:
                f.write("x")
        reported = [f["path"] for f in compile_cache.collect({})["files"]]
        self.assertEqual(reported, ["triton/KEY/add.json"])

    def test_links_and_other_file_systems_are_not_read(self):
        os.makedirs(os.path.join(self.triton, "KEY"))
        os.symlink("/proc/self/environ", os.path.join(self.triton, "KEY", "environ"))
        os.symlink("/proc/self", os.path.join(self.triton, "SELF"))
        with open(os.path.join(self.triton, "KEY", "empty.json"), "w"):
            pass
        reported = [f["path"] for f in compile_cache.collect({})["files"]]
        self.assertEqual(reported, ["triton/KEY/empty.json"])  # an empty file is a file
        # The whole cache directory replaced by a link: nothing is read through it.
        os.rename(self.triton, self.triton + ".moved")
        os.symlink("/proc/self", self.triton)
        self.assertEqual(compile_cache.collect({})["files"], [])


if __name__ == "__main__":
    unittest.main()
