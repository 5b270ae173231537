// Submissions: the fuzzer's bytes as a submission's source, read as the server and the judge
// read it before it runs: its #!POPCORN directives, a declared verdict, the static screen and the
// kernel_language rules, and the screen's findings in the result the worker stores. None of
// these may fail on any source.
#include "fuzz/fuzz_files.h"
#include "judge/judge.h"
#include "problem/problem.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view source = kj::fuzz::as_text(data, size);
  (void)kj::problem::parse_directives(source);
  (void)kj::problem::declared_verdict(source);
  kj::judge::EvalResult result;
  result.screen = kj::judge::screen_python(source);
  for (const auto* language : {"any", "triton", "cuda"}) {
    if (auto finding = kj::judge::screen_kernel_language(source, language)) {
      result.screen.push_back(std::move(*finding));
    }
  }
  (void)kj::judge::to_json(result).dump();  // as the worker stores it
  (void)kj::judge::render_text(result, true);
  return 0;
}
