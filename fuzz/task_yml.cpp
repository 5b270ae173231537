// task.yml: the fuzzer's bytes as the task.yml of a problem folder that holds the files the
// bundled problems name (so that a mutated seed gets past the file checks), loaded as `kj serve`
// and `kj eval` load a problem. ProblemError is the documented outcome of a bad task.yml.
#include "fuzz/fuzz_files.h"
#include "problem/problem.h"

namespace {

// problems/<name>/ beside problems/utils.py and problems/vectoradd/, as in the repository, plus
// the ../../../problems/utils.py that tests/problems/* name.
const kj::fuzz::ScratchDir& root() {
  static const kj::fuzz::ScratchDir dir;
  static const bool filled = [] {
    const auto problems = dir.path() / "a" / "problems";
    const auto nested = dir.path() / "a" / "b" / "c";
    for (const auto& folder : {problems / "task", nested / "task"}) {
      for (const char* name : {"reference.py", "task.py", "template.py", "template_triton.py",
                               "template.cu", "reference.cuh", "task.h"}) {
        kj::fuzz::write_file(folder / name, "# fuzz\n");
      }
    }
    for (const char* name : {"reference.py", "task.py", "template_triton.py"}) {
      kj::fuzz::write_file(problems / "vectoradd" / name, "# fuzz\n");
    }
    kj::fuzz::write_file(problems / "utils.py", "# fuzz\n");
    kj::fuzz::write_file(nested / "utils.py", "# fuzz\n");
    return true;
  }();
  (void)filled;
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto dir = root().path() / "a" / "b" / "c" / "task";
  kj::fuzz::write_file(dir / "task.yml", kj::fuzz::as_text(data, size));
  try {
    const auto problem = kj::problem::load(dir);
    for (const auto& device : {"cpu", "cuda:0"}) {
      const auto on_device = problem.on_device(device);
      (void)on_device.gpus_needed();
      for (const auto& args : on_device.benchmarks) (void)kj::problem::describe_args(args);
    }
    for (const auto& args : problem.tests) (void)kj::problem::describe_args(args);
    (void)problem.submission_file();
  } catch (const kj::problem::ProblemError&) {
  }
  return 0;
}
