// The store's ranking rule applied to one submission record (stats, exports).
#pragma once

#include <optional>

#include "store/store.h"

namespace kj::data::detail {

// The best score of a passed public leaderboard-mode run, unless the submission is marked hacked
// or one of its secret runs failed.
std::optional<double> counted_score(const store::SubmissionRecord& record);

}  // namespace kj::data::detail
