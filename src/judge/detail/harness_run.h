// What the single-harness run and the multi-rank run share: the sandbox spec, the harness's job,
// the ranked run's secret and the wall limit. Internal to src/judge.
#pragma once

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "judge/judge.h"

namespace kj::judge::detail {

// The sandbox for one harness run; the task directories are bound read-only from task_root.
sandbox::Spec harness_spec(const Environment& environment, const std::filesystem::path& task_root,
                           bool with_task_b, const sandbox::Limits& limits);

// The job the harness reads on stdin's first line.
nlohmann::json harness_job(const EvalRequest& request, bool gpu);

// Leaderboard mode: the secret seed and a newline (stdin's second line); empty otherwise.
std::string secret_line(const EvalRequest& request);

// The wall limit: the request's timeout, else the problem's for the mode.
std::chrono::milliseconds harness_wall(const EvalRequest& request);

// A multi_gpu problem: world_size sandboxes, one harness per rank (src/judge/ranks.cpp).
EvalResult evaluate_ranks(const EvalRequest& request, const Environment& environment,
                          std::vector<ScreenFinding> findings);

// Loopback ports of a multi-rank run's three process groups (the network namespace is the
// run's own, so fixed ports cannot collide with another run).
constexpr int kHarnessGroupPort = 29500;
constexpr int kSubmissionGroupPort = 29501;
constexpr int kReferenceGroupPort = 29502;
// How long the other ranks may take to end after one rank failed before they are cancelled.
constexpr std::chrono::seconds kRankGrace{5};

}  // namespace kj::judge::detail
