#include "datasets/detail/scoring.h"

namespace kj::data::detail {

std::optional<double> counted_score(const store::SubmissionRecord& record) {
  if (record.submission.hacked) return std::nullopt;
  std::optional<double> best;
  for (const auto& run : record.runs) {
    if (run.secret && !run.passed) return std::nullopt;
    if (run.secret || !run.passed || run.mode != "leaderboard" || !run.score) continue;
    if (!best || *run.score < *best) best = run.score;
  }
  return best;
}

}  // namespace kj::data::detail
