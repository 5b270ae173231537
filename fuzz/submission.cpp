// Submissions: the fuzzer's bytes as a submission's source, read as the server and the judge
// read it before it runs: its #!POPCORN directives, a declared verdict, the static screen and the
// kernel_language rules. None of these may fail on any source.
#include "fuzz/fuzz_files.h"
#include "judge/judge.h"
#include "problem/problem.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view source = kj::fuzz::as_text(data, size);
  (void)kj::problem::parse_directives(source);
  (void)kj::problem::declared_verdict(source);
  (void)kj::judge::screen_python(source);
  for (const auto* language : {"any", "triton", "cuda"}) {
    (void)kj::judge::screen_kernel_language(source, language);
  }
  return 0;
}
