// The reference timed alone (docs/timing.md, "Where the reference is timed"): in benchmark and
// leaderboard modes the judge times the reference in a job of its own, in a fresh sandbox, after
// the submission's run ended and under the same GPU lease, so no process of the submission exists
// while the reference is timed (docs/security.md). Internal to src/judge.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>

#include "judge/judge.h"

namespace kj::judge::detail {

// Whether the request's reference is timed (benchmark and leaderboard modes, unless
// --no-reference); the one place this is decided. It always is alone, in a job of its own after
// the submission's run: Python problems (judge.cpp), multi-rank ones (one sandbox per rank,
// ranks.cpp), lang: cu ones (the reference's own program, cuda.cpp).
bool reference_timed(const EvalRequest& request);

// The reference's job (mode `reference`, harness.py's run_reference): the benchmark cases as the
// submission's run timed them, with the salt it drew for each (from its `benchmark` events; the
// secret of a ranked run goes on stdin's second line, as for the submission's), and at most as
// many samples per case as the submission got. Empty, with *why
// set, when a GPU was unhealthy after the run or the events do not give a salt for every timed
// benchmark of `result`.
std::optional<nlohmann::json> reference_job(const EvalRequest& request, bool gpu,
                                            const EvalResult& result,
                                            std::span<const nlohmann::json> events,
                                            std::string* why);

// Merges the reference's run into the submission's result: each timed benchmark's reference
// samples, the speedup, process_times.reference_wall_s. When that run failed in any way, the
// verdict stands: no speedup, and a warning (the record's sandbox.warnings) says why.
void merge_reference(EvalResult& result, const sandbox::Outcome& outcome);
// The same with the run's events given: a multi-rank run's, merged over its ranks as the
// submission's are (each sample the slowest rank's), with `outcome` standing for the ranks'
// runs, each of which reference_run_failure found complete. `parse_error`: why the events were
// not all readable, or empty.
void merge_reference(EvalResult& result, const sandbox::Outcome& outcome,
                     std::span<const nlohmann::json> events, const std::string& parse_error);

// Why one run of the reference's job gave no times for all `expected` benchmarks (it did not
// start, failed, hit a limit, or ended early), or empty when it did: one rank's run, checked
// before the ranks' events are merged. `events` and `parse_error`: the run's, as parsed.
std::string reference_run_failure(const sandbox::Outcome& outcome,
                                  std::span<const nlohmann::json> events,
                                  const std::string& parse_error, std::size_t expected);

// No speedup for `result`, and a warning saying that the reference was not timed, and why.
void omit_speedup(EvalResult& result, const std::string& why);

// The reference's score over the submission's, when every timed benchmark has reference samples
// (verdict.cpp's scoring and merge_reference). Throws std::invalid_argument as bench::aggregate.
std::optional<double> speedup_of(const EvalResult& result);

}  // namespace kj::judge::detail
