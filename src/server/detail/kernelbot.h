// The KernelBot wire format, as popcorn-cli (gpu-mode/popcorn-cli, src/service/mod.rs) parses it:
// the JSON bodies of /leaderboards, /user/submissions and the submission routes, and the
// Server-Sent Events `status`, `result` and `error` of a streamed submission. Pure functions of
// the stored data; the routes that call them live in server.cpp.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "store/store.h"

namespace kj::server::detail {

// One item of GET /leaderboards: name, description, deadline, task (an object), gpu_types.
nlohmann::json kernelbot_leaderboard(const store::Leaderboard& lb, const nlohmann::json& task);

// One item of GET /user/submissions: id, leaderboard_name, file_name, submission_time, done,
// runs (gpu_type and score of each).
nlohmann::json kernelbot_submission_summary(const store::Submission& s,
                                            const std::vector<store::Run>& runs);

// How many jobs wait for a GPU type, as popcorn-cli prints it ("kj cpu queue: 2 queued jobs").
nlohmann::json kernelbot_runner_queue(const std::string& gpu_type, int queued_jobs);

// GET /user/submissions/{id}: the summary's fields plus leaderboard_id, user_id, code, runs
// (mode, secret, runner, score, passed, start and end), job (status, error) and runner_queue.
nlohmann::json kernelbot_submission_details(const store::Submission& s,
                                            const std::vector<store::Run>& runs,
                                            const std::string& code,
                                            const std::optional<store::Job>& latest_job,
                                            const nlohmann::json& runner_queue);

// A profile run's stored Nsight Compute report and the URL it downloads from.
struct ProfileDownload {
  std::string report;  // the .ncu-rep bytes
  std::string url;
};

// The data of the final `result` event: results[0].runs.<mode>.run (success, passed, stdout,
// stderr, duration, result) and reports (one text report, as popcorn-cli prints it). A profile
// run also carries, as popcorn-cli's handle_profile_result reads it, run.result's
// "benchmark.0.report" (the summary, base64) and `profile`: profiler, download_url and trace
// (base64 of a zip with profile.ncu-rep and ncu-details.txt, which popcorn-cli saves).
nlohmann::json kernelbot_result(const store::Submission& s, const std::vector<store::Run>& runs,
                                const std::optional<ProfileDownload>& profile = std::nullopt);

// A progress event of a job (docs/server.md) as one line for people; empty for none.
std::string kernelbot_status_message(const nlohmann::json& progress_event);

// "event: NAME\ndata: JSON\n\n".
std::string sse_event(const std::string& name, const nlohmann::json& data);

}  // namespace kj::server::detail
