// KernelBench files: the fuzzer's bytes as a KernelBench problem file given to
// `kj problem import-kernelbench`, imported into a scratch folder (and the problem written there
// loaded back, as the import does). ProblemError is the documented outcome of a bad file.
#include "fuzz/fuzz_files.h"
#include "problem/problem.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const kj::fuzz::ScratchDir scratch;
  const auto file = scratch.path() / "model.py";
  kj::fuzz::write_file(file, kj::fuzz::as_text(data, size));
  const auto out_root = scratch.path() / "imported";
  try {
    (void)kj::problem::import_kernelbench(file, out_root);
  } catch (const kj::problem::ProblemError&) {
  }
  std::filesystem::remove_all(out_root);
  return 0;
}
