// The result of an evaluation that ended before any sandbox ran: refused (source too large, the
// problem's kernel_language, the static screen, a mode or layout the path cannot run) or stopped
// by the judge's own failure to prepare the run. Internal to src/judge.
#pragma once

#include <string>
#include <vector>

#include "judge/judge.h"

namespace kj::judge::detail {

// What every such result carries: the request's mode, problem and ranking_by, the submission's
// name (compare mode: "A vs B", as a run names it), the environment's device, `screen`, and the
// sandbox marked as not started; no cases, no timings.
EvalResult not_started(const EvalRequest& request, const Environment& environment, Verdict verdict,
                       std::string reason, std::vector<ScreenFinding> screen = {});

}  // namespace kj::judge::detail
