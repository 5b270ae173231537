// The harness protocol: the fuzzer's bytes as the result stream the judge reads from the harness
// process, which runs the submission's code in the same sandbox and so may write anything there.
// The judge splits it into events, decides a verdict in every mode, and renders the result as
// the store and the reports do. None of it may fail on any stream.
#include "fuzz/fuzz_files.h"
#include "judge/judge.h"

namespace {

// A problem of 3 tests and 2 benchmarks (one with its work known, for the physical floor).
const kj::problem::Problem& problem() {
  static const kj::problem::Problem p = [] {
    kj::problem::Problem out;
    out.name = "fuzz";
    for (int i = 0; i < 3; ++i) out.tests.push_back({{"size", 8 + i}, {"seed", i}});
    out.benchmarks = {{{"size", 1024}, {"seed", 1}}, {{"size", 2048}, {"seed", 2}}};
    out.benchmark_work.resize(2);
    out.benchmark_work[0].bytes = 6291456;
    out.ranking_by = kj::problem::RankingBy::geom;
    return out;
  }();
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  kj::sandbox::Outcome outcome;
  outcome.started = true;
  outcome.exit_code = 0;
  // The harness and the submission share the sandbox's stdout and stderr too.
  outcome.result_data = kj::fuzz::as_text(data, size);
  outcome.stdout_data = outcome.result_data;
  outcome.stderr_data = outcome.result_data;
  std::string error;
  const auto events = kj::judge::parse_events(outcome.result_data, &error);
  for (const auto mode :
       {kj::judge::Mode::test, kj::judge::Mode::benchmark, kj::judge::Mode::leaderboard,
        kj::judge::Mode::compare, kj::judge::Mode::profile}) {
    const auto result = kj::judge::decide(outcome, events, mode, problem());
    (void)kj::judge::to_json(result).dump();  // as the worker stores it
    (void)kj::judge::render_text(result, true);
  }
  return 0;
}
