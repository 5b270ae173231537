// Reference times kept between the runs of one worker (docs/timing.md, "Reference times kept
// between runs"). A benchmark or leaderboard run times the reference in a job of its own after
// the submission's (reference_alone.h): as long again as the submission's own timing, for a
// figure that depends only on the problem, the GPU and the harness. A worker keeps the reference
// samples of its last such run per setup for a while and gives them to the next runs of the same
// setup, which then skip the reference's job; each says so and how old its times are
// (process_times.reference_kept_age_s). Submissions never reach them: they are timed by the
// judge's own job, after a submission's processes are gone, and a kept entry is chosen by the
// problem's files and the judge's settings only.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "judge/judge.h"

namespace kj::judge {

class ReferenceTimes {
 public:
  using Clock = std::chrono::steady_clock;

  // Times are given to later runs for `keep_for` after they were taken; zero keeps none (every
  // run times its reference).
  explicit ReferenceTimes(std::chrono::seconds keep_for) : keep_for_(keep_for) {}

  // The setup the reference's times depend on: every task file (the submission's file empty),
  // the benchmark cases, the mode (ranked or not), the timing settings, the device(s), the
  // interpreter and the harness.
  static std::string key(const EvalRequest& request, const Environment& environment);

  // evaluate() through the kept times: a request whose setup has times younger than keep_for is
  // run without timing its reference and gets them; any other times it, and leaves what it took
  // for the next runs when every benchmark got reference samples and the GPU was healthy.
  EvalResult evaluate(const EvalRequest& request, const Environment& environment,
                      WarmHarness* warm = nullptr, HarnessZygote* zygote = nullptr);

  // evaluate()'s three steps, apart for tests. `find`: the times kept for `key` still young at
  // `now` (older ones are dropped). `keep`: `result`'s reference samples, when it has them for
  // every benchmark on a healthy GPU. `give`: kept times into a run made without its reference:
  // each benchmark's reference samples, the speedup and the age; a run that did not pass, or
  // whose benchmarks do not match, is left as it is (no speedup).
  struct Kept {
    std::vector<std::vector<double>> samples;  // per benchmark, in the run's order
    Clock::time_point taken;
  };
  std::optional<Kept> find(const std::string& key, Clock::time_point now);
  void keep(const std::string& key, const EvalResult& result, Clock::time_point now);
  static void give(const Kept& kept, Clock::time_point now, EvalResult& result);

 private:
  std::chrono::seconds keep_for_;
  std::map<std::string, Kept> kept_;
};

}  // namespace kj::judge
