# expect: time_limit
# leaves: kjcorpus_ccbomb
# An inline C++ extension whose compilation never ends: a constexpr evaluation of 2^60 steps,
# with GCC's own constexpr limits lifted by the submission's flags. The wall-clock limit kills
# the whole tree, the compiler (cc1plus) included. Without ninja, torch cannot build inline
# extensions, so the same source goes to the compiler directly.
import shutil
import subprocess

SOURCE = r"""
constexpr unsigned long long spin(unsigned long long n) {
  unsigned long long x = 1;
  for (unsigned long long i = 0; i < n; ++i)
    for (unsigned long long j = 0; j < n; ++j) x = x * 6364136223846793005ULL + (i ^ j);
  return x;
}
static_assert(spin(1ULL << 30) != 0, "never decided");
int kjcorpus_ccbomb() { return 0; }
"""
FLAGS = ["-fconstexpr-ops-limit=4611686018427387904", "-fconstexpr-loop-limit=2147483647"]

if shutil.which("ninja"):
    from torch.utils.cpp_extension import load_inline

    load_inline(name="kjcorpus_ccbomb", cpp_sources=[SOURCE], functions=["kjcorpus_ccbomb"],
                extra_cflags=FLAGS)
else:
    with open("/tmp/kjcorpus_ccbomb.cpp", "w") as f:
        f.write(SOURCE)
    subprocess.run(["c++", "-std=c++17", "-fsyntax-only", *FLAGS, "/tmp/kjcorpus_ccbomb.cpp"],
                   check=True)


def custom_kernel(data):
    a, b = data
    return a + b
