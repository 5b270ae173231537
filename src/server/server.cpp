#include "server/server.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "problem/problem.h"
#include "server/detail/archive.h"
#include "server/detail/kernelbot.h"
#include "server/detail/openapi.h"
#include "server/detail/pages.h"
#include "server/detail/requests.h"

namespace kj::server {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
using detail::ApiError;
using detail::parse_json_body;
using detail::string_field;
using detail::SubmissionRequest;

store::Time now_us() {
  return std::chrono::floor<std::chrono::microseconds>(std::chrono::system_clock::now());
}

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(2) + "\n", "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& code,
                const std::string& message) {
  send_json(res, status, {{"error", {{"code", code}, {"message", message}}}});
}

json time_json(const std::optional<store::Time>& time) {
  return time ? json(format_time(*time)) : json(nullptr);
}

json optional_json(const std::optional<double>& value) {
  return value ? json(*value) : json(nullptr);
}

bool past(const std::optional<store::Time>& deadline) { return deadline && *deadline <= now_us(); }

json leaderboard_json(const store::Leaderboard& lb, bool full) {
  json out = {{"name", lb.name},
              {"deadline", time_json(lb.deadline)},
              {"open", !past(lb.deadline)},
              {"gpu_types", lb.gpu_types},
              {"visibility", store::to_string(lb.visibility)}};
  if (full) {
    out["description"] = lb.description;
    out["created_at"] = format_time(lb.created_at);
  } else {
    const auto first_line = lb.description.substr(0, lb.description.find('\n'));
    out["summary"] = first_line;
  }
  return out;
}

json submission_json(const store::Submission& s) {
  return {{"id", s.id},
          {"user", s.user_name},
          {"leaderboard", s.leaderboard_name},
          {"file_name", s.file_name},
          {"gpu", s.gpu_type},
          {"mode", s.mode},
          {"created_at", format_time(s.created_at)},
          {"status", store::to_string(s.status)},
          {"verdict", s.verdict.empty() ? json(nullptr) : json(s.verdict)},
          {"score", optional_json(s.score)},
          {"hacked", s.hacked},
          {"code_sha256", s.code_sha256}};
}

bool is_final(store::SubmissionStatus status) {
  return status == store::SubmissionStatus::done || status == store::SubmissionStatus::failed;
}

// The file name as given, reduced to its last path component and safe characters.
std::string clean_file_name(const std::string& name) {
  std::string base = fs::path(name).filename().string();
  std::string out;
  for (const char c : base) {
    out +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '_';
  }
  if (out.empty() || out.front() == '.') out = "submission.py";
  return out.substr(0, 128);
}

}  // namespace

struct Server::State {
  std::shared_ptr<store::Store> store;
  ApiOptions options;
  std::shared_ptr<worker::WorkerStats> stats;
  httplib::Server http;
  std::atomic<bool> stopping{false};
  std::mutex stop_mutex;
  std::condition_variable stop_wake;

  // Rankings by leaderboard and GPU type, with the API's body ready to send: the store's query
  // reads every eligible run (~0.3 s over 100k runs) under the store's lock. An entry is
  // recomputed when this process's workers complete a job, when a submission is marked hacked or
  // a leaderboard changes here (ranking_changes), and after ranking_max_age (workers of other
  // processes on the same store).
  struct CachedRanking {
    std::uint64_t generation = 0;
    std::chrono::steady_clock::time_point computed;
    std::vector<store::RankedEntry> entries;
    std::string api_body;
    std::string api_body_gzip;  // the same, gzipped once: a tenth of the bytes per request
  };
  std::mutex ranking_mutex;       // guards rankings
  std::mutex ranking_fill_mutex;  // one ranking query at a time; the others wait for its result
  std::map<std::pair<store::Id, std::string>, std::shared_ptr<const CachedRanking>> rankings;
  std::atomic<std::uint64_t> ranking_changes{0};

  std::uint64_t ranking_generation() const {
    return ranking_changes.load() + (stats ? stats->completed_jobs() : 0);
  }

  std::shared_ptr<const CachedRanking> cached_ranking(const store::Leaderboard& lb,
                                                      const std::string& gpu) {
    const auto key = std::make_pair(lb.id, gpu);
    const auto lookup = [&](std::uint64_t generation) -> std::shared_ptr<const CachedRanking> {
      std::lock_guard lock(ranking_mutex);
      const auto it = rankings.find(key);
      if (it == rankings.end() || it->second->generation != generation ||
          std::chrono::steady_clock::now() - it->second->computed >= options.ranking_max_age) {
        return nullptr;
      }
      return it->second;
    };
    if (auto hit = lookup(ranking_generation())) return hit;
    std::lock_guard fill(ranking_fill_mutex);
    // Read before the query: a job completed while it runs makes the next request query again.
    const std::uint64_t generation = ranking_generation();
    if (auto hit = lookup(generation)) return hit;
    const auto computed = std::chrono::steady_clock::now();
    auto entries = store->ranking(lb.id, gpu);
    json rows = json::array();
    for (const auto& entry : entries) {
      rows.push_back({{"rank", entry.rank},
                      {"user", entry.user_name},
                      {"submission_id", entry.submission_id},
                      {"file_name", entry.file_name},
                      {"score", entry.score},
                      {"speedup", optional_json(entry.speedup)},
                      {"submitted_at", format_time(entry.submitted_at)}});
    }
    // Compact: at 1,000 users the indented body was half spaces (195 KB), and every request
    // copies it through loopback.
    std::string body =
        json{{"leaderboard", lb.name}, {"gpu", gpu}, {"ranking", rows}}.dump() + "\n";
    std::string compressed = detail::gzip(body);
    auto entry = std::make_shared<const CachedRanking>(CachedRanking{
        generation, computed, std::move(entries), std::move(body), std::move(compressed)});
    std::lock_guard lock(ranking_mutex);
    rankings[key] = entry;
    return entry;
  }

  std::optional<store::User> bearer_user(const httplib::Request& req) {
    const std::string header = req.get_header_value("Authorization");
    if (header.empty()) {
      // A browser on the pages (the submission page's event stream, the code link) sends the
      // cookie instead; only reads accept it, so another site cannot make a browser submit.
      const std::string cookie = req.method == "GET" ? detail::token_cookie(req) : "";
      return cookie.empty() ? std::nullopt : store->user_for_token(cookie);
    }
    const std::string prefix = "Bearer ";
    if (header.rfind(prefix, 0) != 0) {
      throw ApiError(401, "invalid_token", "Authorization must be 'Bearer TOKEN'");
    }
    auto user = store->user_for_token(header.substr(prefix.size()));
    if (!user) throw ApiError(401, "invalid_token", "the token is unknown or was revoked");
    return user;
  }

  store::User require_user(const httplib::Request& req) {
    auto user = bearer_user(req);
    if (!user) {
      throw ApiError(401, "missing_token", "this request needs 'Authorization: Bearer TOKEN'");
    }
    return *user;
  }

  store::User require_admin(const httplib::Request& req) {
    auto user = require_user(req);
    if (!user.is_admin) throw ApiError(403, "admin_only", "only admins may do this");
    return user;
  }

  store::Leaderboard leaderboard(const std::string& name, const std::optional<store::User>& user) {
    auto lb = store->get_leaderboard(name);
    if (!lb || (lb->visibility == store::Visibility::hidden && !(user && user->is_admin))) {
      throw ApiError(404, "unknown_leaderboard", "no leaderboard named '" + name + "'");
    }
    return *lb;
  }

  store::Submission submission(const std::string& id_text) {
    store::Id id = 0;
    try {
      id = std::stoll(id_text);
    } catch (const std::exception&) {
      throw ApiError(404, "unknown_submission", "no submission " + id_text);
    }
    auto s = store->get_submission(id);
    if (!s) throw ApiError(404, "unknown_submission", "no submission " + id_text);
    return *s;
  }

  // The owner and admins always; anyone once the leaderboard's deadline passed.
  void check_can_read(const store::Submission& s, const std::optional<store::User>& user) {
    if (user && (user->is_admin || user->id == s.user_id)) return;
    const auto lb = store->get_leaderboard(s.leaderboard_name);
    if (lb && past(lb->deadline)) return;
    if (!user)
      throw ApiError(401, "missing_token", "this request needs 'Authorization: Bearer TOKEN'");
    throw ApiError(403, "not_yours",
                   "submission " + std::to_string(s.id) +
                       " belongs to another user; it becomes readable after the leaderboard's "
                       "deadline");
  }

  std::string pick_gpu(const store::Leaderboard& lb, const std::string& asked) {
    if (!asked.empty()) {
      if (std::find(lb.gpu_types.begin(), lb.gpu_types.end(), asked) == lb.gpu_types.end()) {
        throw ApiError(400, "unknown_gpu",
                       "leaderboard '" + lb.name + "' has no GPU type '" + asked +
                           "' (it has: " + json(lb.gpu_types).dump() + ")");
      }
      return asked;
    }
    if (lb.gpu_types.size() == 1) return lb.gpu_types.front();
    for (const auto& served : options.served_gpu_types) {
      if (std::find(lb.gpu_types.begin(), lb.gpu_types.end(), served) != lb.gpu_types.end()) {
        return served;
      }
    }
    throw ApiError(400, "missing_gpu",
                   "say which GPU type (gpu, or '#!POPCORN gpu TYPE'); leaderboard '" + lb.name +
                       "' has " + json(lb.gpu_types).dump());
  }

  // Every rule a submission passes, whichever API it came through: size, directives, mode,
  // leaderboard, GPU type, deadline, rate limit. Creates it and queues its job, or throws ApiError
  // (a 429 sets Retry-After on res) with nothing stored.
  store::Submission accept_submission(const store::User& user, SubmissionRequest r,
                                      httplib::Response& res) {
    if (!r.has_code) {
      throw ApiError(400, "missing_field", "the submission has no code ('code', or a 'file' part)");
    }
    if (r.code.size() > options.max_source_bytes) {
      throw ApiError(413, "source_too_large",
                     "the submission is " + std::to_string(r.code.size()) +
                         " bytes, over the limit of " + std::to_string(options.max_source_bytes) +
                         " bytes");
    }
    const auto directives = problem::parse_directives(r.code);
    if (r.leaderboard.empty() && directives.leaderboard) r.leaderboard = *directives.leaderboard;
    if (r.gpu.empty() && !directives.gpus.empty()) r.gpu = directives.gpus.front();
    if (r.leaderboard.empty()) {
      throw ApiError(400, "missing_field",
                     "say which leaderboard ('leaderboard', or '#!POPCORN leaderboard NAME' in the "
                     "code)");
    }
    if (r.mode.empty()) r.mode = "test";
    if (r.mode != "test" && r.mode != "benchmark" && r.mode != "leaderboard" &&
        r.mode != "profile") {
      throw ApiError(400, "invalid_mode",
                     "mode must be test, benchmark, leaderboard or profile, not '" + r.mode + "'");
    }
    const auto lb = leaderboard(r.leaderboard, user);
    const std::string gpu = pick_gpu(lb, r.gpu);
    if (past(lb.deadline) && !user.is_admin) {
      throw ApiError(403, "deadline_passed",
                     "leaderboard '" + lb.name + "' closed at " + format_time(*lb.deadline) +
                         "; it takes no more submissions");
    }
    if (!user.is_admin) {
      const auto window = store->rate_window(user.id, lb.id, "", options.submissions_per_hour,
                                             std::chrono::hours(1));
      if (window.retry_after) {
        res.set_header("Retry-After", std::to_string(window.retry_after->count()));
        throw ApiError(429, "rate_limited",
                       "at most " + std::to_string(options.submissions_per_hour) +
                           " submissions per hour on '" + lb.name + "'; retry in " +
                           std::to_string(window.retry_after->count()) + " s");
      }
    }
    store::NewSubmission submission;
    submission.user_id = user.id;
    submission.leaderboard_id = lb.id;
    submission.file_name = clean_file_name(r.file_name.empty() ? "submission.py" : r.file_name);
    submission.code = std::move(r.code);
    submission.gpu_type = gpu;
    submission.mode = r.mode;
    // A multi-GPU problem's job waits for a worker with world_size GPUs of the type free.
    try {
      submission.gpus_needed = problem::load(lb.problem_dir).gpus_needed();
    } catch (const problem::ProblemError&) {
      // Judged (and reported) by the worker, which loads the problem again.
    }
    return store->create_submission(submission);
  }

  void create_submission(const httplib::Request& req, httplib::Response& res) {
    const auto user = require_user(req);
    const auto created = accept_submission(user, detail::api_submission_request(req), res);
    res.set_header("Location", "/api/submissions/" + std::to_string(created.id));
    send_json(res, 201, submission_json(created));
  }

  json runs_json(const store::Submission& s, bool show_secret) {
    json runs = json::array();
    for (const auto& run : store->submission_runs(s.id)) {
      json r = {{"id", run.id},
                {"mode", run.mode},
                {"runner", run.runner},
                {"secret", run.secret},
                {"passed", run.passed},
                {"score", optional_json(run.score)},
                {"start_time", format_time(run.start_time)},
                {"end_time", format_time(run.end_time)}};
      // The secret run's cases are derived from the leaderboard's secret: admins only.
      if (!run.secret || show_secret) r["result"] = json::parse(run.result_json, nullptr, false);
      runs.push_back(std::move(r));
    }
    if (const auto profile = stored_profile(s); profile && profile->report) {
      for (auto& r : runs) {
        if (r["id"] == profile->run.id) r["profile_report"] = profile_report_json(s, *profile);
      }
    }
    return runs;
  }

  // Profile mode: the public run whose result has a profile, and its stored report, if any.
  struct StoredProfile {
    store::Run run;
    json profile;
    std::optional<store::RunFileInfo> report;
  };

  std::optional<StoredProfile> stored_profile(const store::Submission& s) {
    if (s.mode != "profile") return std::nullopt;
    for (auto& run : store->submission_runs(s.id)) {
      if (run.secret) continue;
      json result = json::parse(run.result_json, nullptr, false);
      if (!result.is_object() || !result.contains("profile")) continue;
      StoredProfile out{std::move(run), result["profile"], std::nullopt};
      for (auto& file : store->run_files(s.id)) {
        if (file.run_id == out.run.id && file.name == worker::kProfileReportFile) out.report = file;
      }
      return out;
    }
    return std::nullopt;
  }

  static json profile_report_json(const store::Submission& s, const StoredProfile& profile) {
    return {{"name", profile.report->name},
            {"bytes", profile.report->bytes},
            {"url", "/api/submissions/" + std::to_string(s.id) + "/profile/report"}};
  }

  StoredProfile require_profile(const store::Submission& s) {
    auto profile = stored_profile(s);
    if (!profile) {
      throw ApiError(404, "no_profile",
                     "submission " + std::to_string(s.id) +
                         " has no profile (not profile mode, or not judged yet)");
    }
    return *profile;
  }

  // The stored report as a download: owner and admins only (it holds the kernels' code).
  void send_profile_report(const store::Submission& s, httplib::Response& res) {
    const auto profile = require_profile(s);
    const auto report =
        profile.report ? store->run_file(profile.run.id, profile.report->name) : std::nullopt;
    if (!report) {
      throw ApiError(404, "no_profile_report",
                     "submission " + std::to_string(s.id) + " has no stored profile report" +
                         (profile.profile.contains("message")
                              ? ": " + profile.profile.value("message", std::string())
                              : std::string()));
    }
    res.set_header("Content-Disposition",
                   "attachment; filename=\"submission-" + std::to_string(s.id) + ".ncu-rep\"");
    res.set_content(*report, "application/octet-stream");
  }

  // GET /api/submissions/{id}/profile: the summary (kernels, text) and the report's link.
  void get_profile(const httplib::Request& req, httplib::Response& res) {
    const auto s = own_submission(require_user(req), req.matches[1]);
    const auto profile = require_profile(s);
    json out = {{"submission_id", s.id},
                {"available", profile.profile.value("available", false)},
                {"message", profile.profile.value("message", std::string())},
                {"kernels", profile.profile.value("kernels", json::array())},
                {"summary", judge::profile_text(profile.profile)},
                {"report", profile.report ? profile_report_json(s, profile) : json(nullptr)}};
    send_json(res, 200, out);
  }

  void get_profile_report(const httplib::Request& req, httplib::Response& res) {
    send_profile_report(own_submission(require_user(req), req.matches[1]), res);
  }

  void get_submission(const httplib::Request& req, httplib::Response& res) {
    const auto user = bearer_user(req);
    const auto s = submission(req.matches[1]);
    check_can_read(s, user);
    json out = submission_json(s);
    out["runs"] = runs_json(s, user && user->is_admin);
    json jobs = json::array();
    for (const auto& job : store->submission_jobs(s.id)) {
      jobs.push_back({{"id", job.id},
                      {"state", store::to_string(job.state)},
                      {"attempts", job.attempts},
                      {"error", job.error}});
    }
    out["jobs"] = jobs;
    send_json(res, 200, out);
  }

  // What a stream following one submission does at each step; a callback returning false means
  // the client went away.
  struct SubmissionFollower {
    std::function<bool(const store::ProgressEvent&)> progress;  // each new event of the latest job
    std::function<bool(const store::Submission&, const std::vector<store::Job>&)> waiting;
    std::function<void(const store::Submission&)> final;  // once, when done or failed
  };

  // Follows a submission until it is final or the server stops. job_id and seq say which events
  // were sent already (Last-Event-ID). Workers append their events before completing, so a final
  // status read after the events means every event was passed on.
  void follow_submission(store::Id submission_id, store::Id job_id, std::int64_t seq,
                         const SubmissionFollower& follower) {
    std::uint64_t seen = 0;
    while (!stopping) {
      // Read before the store: progress recorded after this wakes the wait below at once.
      if (stats) seen = stats->progress_count();
      const auto current = store->get_submission(submission_id);
      if (!current) return;
      const auto jobs = store->submission_jobs(submission_id);
      if (!jobs.empty()) {
        const auto latest = std::max_element(
            jobs.begin(), jobs.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
        if (latest->id != job_id) {
          job_id = latest->id;
          seq = 0;
        }
        for (const auto& event : store->progress_since(job_id, seq)) {
          seq = event.seq;
          if (!follower.progress(event)) return;
        }
      }
      if (is_final(current->status)) {
        follower.final(*current);
        return;
      }
      if (!follower.waiting(*current, jobs)) return;
      if (stats) {
        // This process's workers signal their progress; the poll covers other processes'.
        stats->wait_for_progress(seen, options.event_poll);
      } else {
        std::unique_lock lock(stop_mutex);
        stop_wake.wait_for(lock, options.event_poll, [this] { return stopping.load(); });
      }
    }
  }

  // The place of a submission's latest job in its queue; none once it runs.
  std::optional<int> queue_position(const std::vector<store::Job>& jobs) {
    if (jobs.empty()) return std::nullopt;
    const auto latest = std::max_element(jobs.begin(), jobs.end(),
                                         [](const auto& a, const auto& b) { return a.id < b.id; });
    if (latest->state != store::JobState::queued) return std::nullopt;
    return store->queue_position(latest->id);
  }

  // Server-Sent Events: the latest job's progress (ids "JOB.SEQ"), a `queue` event whenever the
  // place in the queue changes while it waits, then one `result` event with the submission as
  // stored once it is final.
  void stream_events(const httplib::Request& req, httplib::Response& res) {
    const auto user = bearer_user(req);
    const auto s = submission(req.matches[1]);
    check_can_read(s, user);
    const detail::EventPosition resume =
        detail::parse_last_event_id(req.get_header_value("Last-Event-ID"));
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");
    const store::Id submission_id = s.id;
    res.set_chunked_content_provider(
        "text/event-stream", [this, submission_id, resume](std::size_t, httplib::DataSink& sink) {
          auto write = [&](const std::string& text) {
            return sink.write(text.data(), text.size());
          };
          auto since_keepalive = std::chrono::steady_clock::now();
          std::optional<int> last_position;
          SubmissionFollower follower;
          follower.progress = [&](const store::ProgressEvent& event) {
            return write("id: " + std::to_string(event.job_id) + "." + std::to_string(event.seq) +
                         "\nevent: progress\ndata: " + event.event_json + "\n\n");
          };
          follower.waiting = [&](const store::Submission&, const std::vector<store::Job>& jobs) {
            const auto position = queue_position(jobs);
            if (position && position != last_position) {
              last_position = position;
              return write("event: queue\ndata: " + json{{"position", *position}}.dump() + "\n\n");
            }
            if (std::chrono::steady_clock::now() - since_keepalive > std::chrono::seconds(15)) {
              since_keepalive = std::chrono::steady_clock::now();
              return write(": keep-alive\n\n");
            }
            return true;
          };
          follower.final = [&](const store::Submission& final_submission) {
            write("event: result\ndata: " + submission_json(final_submission).dump() + "\n\n");
          };
          follow_submission(submission_id, resume.job, resume.seq, follower);
          sink.done();
          return true;
        });
  }

  // A user's submissions as a listing asks for them: ?leaderboard= and ?limit= (1-1000, 50).
  std::vector<store::Submission> listed_submissions(const httplib::Request& req,
                                                    const store::User& user) {
    store::Id leaderboard_id = 0;
    if (req.has_param("leaderboard"))
      leaderboard_id = leaderboard(req.get_param_value("leaderboard"), user).id;
    int limit = 50;
    if (req.has_param("limit")) {
      try {
        limit = std::clamp(std::stoi(req.get_param_value("limit")), 1, 1000);
      } catch (const std::exception&) {
        throw ApiError(400, "invalid_field", "limit must be a number");
      }
    }
    return store->user_submissions(user.id, leaderboard_id, limit);
  }

  void list_submissions(const httplib::Request& req, httplib::Response& res) {
    const auto user = require_user(req);
    json list = json::array();
    for (const auto& s : listed_submissions(req, user)) {
      list.push_back(submission_json(s));
    }
    send_json(res, 200, {{"submissions", list}});
  }

  void get_code(const httplib::Request& req, httplib::Response& res) {
    const auto user = bearer_user(req);
    const auto s = submission(req.matches[1]);
    check_can_read(s, user);
    const auto code = store->get_code(s.code_sha256);
    if (!code) throw ApiError(404, "unknown_code", "the code of this submission is missing");
    res.set_header("Content-Disposition", "attachment; filename=\"" + s.file_name + "\"");
    res.set_content(*code, "text/plain; charset=utf-8");
  }

  void mark_hacked(const httplib::Request& req, httplib::Response& res) {
    require_admin(req);
    const auto s = submission(req.matches[1]);
    const json body = parse_json_body(req);
    const bool hacked = detail::bool_field(body, "hacked", true);
    store->set_submission_hacked(s.id, hacked);
    ++ranking_changes;
    send_json(res, 200, submission_json(*store->get_submission(s.id)));
  }

  void list_leaderboards(const httplib::Request& req, httplib::Response& res) {
    const auto user = bearer_user(req);
    json list = json::array();
    for (const auto& lb : store->list_leaderboards(user && user->is_admin)) {
      list.push_back(leaderboard_json(lb, false));
    }
    send_json(res, 200, {{"leaderboards", list}});
  }

  void get_leaderboard(const httplib::Request& req, httplib::Response& res) {
    const auto lb = leaderboard(req.matches[1], bearer_user(req));
    json out = leaderboard_json(lb, true);
    try {
      const auto problem = problem::load(lb.problem_dir);
      json templates = json::array();
      for (const auto& [language, path] : problem.templates) templates.push_back(language);
      out["templates"] = templates;
      out["tests"] = problem.tests.size();
      out["benchmarks"] = problem.benchmarks.size();
      out["ranking_by"] = problem::to_string(problem.ranking_by);
      out["kernel_language"] = problem.kernel_language;
      out["ranked_timing"] = problem.ranked_timing;
    } catch (const std::exception& e) {
      out["problem_error"] = e.what();
    }
    send_json(res, 200, out);
  }

  void get_ranking(const httplib::Request& req, httplib::Response& res) {
    const auto lb = leaderboard(req.matches[1], bearer_user(req));
    const std::string gpu = pick_gpu(lb, req.get_param_value("gpu"));
    const auto cached = cached_ranking(lb, gpu);
    res.set_header("Vary", "Accept-Encoding");
    if (detail::accepts_gzip(req.get_header_value("Accept-Encoding"))) {
      res.set_header("Content-Encoding", "gzip");
      res.set_content(cached->api_body_gzip, "application/json");
    } else {
      res.set_content(cached->api_body, "application/json");
    }
  }

  void get_template(const httplib::Request& req, httplib::Response& res) {
    const auto lb = leaderboard(req.matches[1], bearer_user(req));
    const auto problem = problem::load(lb.problem_dir);
    if (problem.templates.empty()) {
      throw ApiError(404, "no_template", "leaderboard '" + lb.name + "' has no template");
    }
    std::string language = req.get_param_value("lang");
    if (language.empty())
      language = problem.templates.contains("Python") ? "Python" : problem.templates.begin()->first;
    const auto it = problem.templates.find(language);
    if (it == problem.templates.end()) {
      throw ApiError(404, "no_template",
                     "leaderboard '" + lb.name + "' has no " + language + " template");
    }
    std::ifstream in(problem.dir / it->second, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    res.set_header("Content-Disposition",
                   "attachment; filename=\"" + fs::path(it->second).filename().string() + "\"");
    res.set_content(text.str(), "text/plain; charset=utf-8");
  }

  void create_user(const httplib::Request& req, httplib::Response& res) {
    require_admin(req);
    const json body = parse_json_body(req);
    const std::string name = string_field(body, "name");
    if (name.empty()) throw ApiError(400, "missing_field", "the user needs a 'name'");
    if (store->get_user(name)) throw ApiError(409, "user_exists", "user '" + name + "' exists");
    const bool admin = body.value("admin", false);
    const auto user = store->create_user(name, admin);
    const auto token = store->create_token(user.id, string_field(body, "label"));
    send_json(
        res, 201,
        {{"id", user.id}, {"name", user.name}, {"admin", user.is_admin}, {"token", token.token}});
  }

  void create_token(const httplib::Request& req, httplib::Response& res) {
    require_admin(req);
    const json body = parse_json_body(req);
    const std::string name = string_field(body, "user");
    if (name.empty()) throw ApiError(400, "missing_field", "say which 'user' the token is for");
    const auto user = store->get_user(name);
    if (!user) throw ApiError(404, "unknown_user", "no user named '" + name + "'");
    const auto token = store->create_token(user->id, string_field(body, "label"));
    send_json(res, 201,
              {{"user", user->name}, {"token_id", token.token_id}, {"token", token.token}});
  }

  std::optional<store::Time> deadline_field(const json& body) {
    if (!body.contains("deadline") || body["deadline"].is_null()) return std::nullopt;
    const std::string text = string_field(body, "deadline");
    auto time = parse_time(text);
    if (!time) {
      throw ApiError(400, "invalid_field",
                     "deadline must be UTC ISO 8601 like 2026-03-01T12:00:00Z, not '" + text + "'");
    }
    return time;
  }

  void create_leaderboard(const httplib::Request& req, httplib::Response& res) {
    require_admin(req);
    const json body = parse_json_body(req);
    const std::string problem_dir = string_field(body, "problem_dir");
    if (problem_dir.empty())
      throw ApiError(400, "missing_field", "say which 'problem_dir' to load");
    problem::Problem problem;
    try {
      problem = problem::load(problem_dir);
    } catch (const std::exception& e) {
      throw ApiError(400, "invalid_problem", e.what());
    }
    store::NewLeaderboard lb;
    lb.name = string_field(body, "name");
    if (lb.name.empty()) lb.name = problem.name;
    if (store->get_leaderboard(lb.name)) {
      throw ApiError(409, "leaderboard_exists", "leaderboard '" + lb.name + "' exists");
    }
    lb.problem_dir = problem.dir.string();
    std::ifstream in(problem.dir / "task.yml", std::ios::binary);
    std::ostringstream yaml;
    yaml << in.rdbuf();
    lb.task_yaml = yaml.str();
    lb.description =
        body.contains("description") ? string_field(body, "description") : problem.description;
    lb.deadline = deadline_field(body);
    if (body.contains("gpu_types")) {
      if (!body["gpu_types"].is_array())
        throw ApiError(400, "invalid_field", "gpu_types must be a list");
      for (const auto& g : body["gpu_types"]) {
        if (!g.is_string() || g.get<std::string>().empty()) {
          throw ApiError(400, "invalid_field", "gpu_types must be non-empty strings");
        }
        lb.gpu_types.push_back(g.get<std::string>());
      }
    } else {
      lb.gpu_types = options.served_gpu_types;
    }
    if (lb.gpu_types.empty())
      throw ApiError(400, "missing_field", "the leaderboard needs gpu_types");
    if (string_field(body, "visibility") == "hidden") lb.visibility = store::Visibility::hidden;
    const auto created = store->create_leaderboard(lb);
    ++ranking_changes;
    send_json(res, 201, leaderboard_json(created, true));
  }

  void set_deadline(const httplib::Request& req, httplib::Response& res) {
    const auto user = require_admin(req);
    const auto lb = leaderboard(req.matches[1], user);
    const json body = parse_json_body(req);
    if (!body.contains("deadline")) {
      throw ApiError(400, "missing_field", "say the 'deadline' (ISO 8601, or null for none)");
    }
    store->set_leaderboard_deadline(lb.name, deadline_field(body));
    ++ranking_changes;
    send_json(res, 200, leaderboard_json(*store->get_leaderboard(lb.name), true));
  }

  void metrics(const httplib::Request&, httplib::Response& res) {
    std::ostringstream out;
    std::vector<std::string> types = options.served_gpu_types;
    for (const auto& lb : store->list_leaderboards(true)) {
      types.insert(types.end(), lb.gpu_types.begin(), lb.gpu_types.end());
    }
    std::sort(types.begin(), types.end());
    types.erase(std::unique(types.begin(), types.end()), types.end());
    out << "# HELP kj_queue_depth Jobs queued, by GPU type.\n# TYPE kj_queue_depth gauge\n";
    for (const auto& type : types) {
      out << "kj_queue_depth{gpu_type=\"" << type << "\"} " << store->count_queued_jobs(type)
          << "\n";
    }
    out << "# HELP kj_jobs Jobs in the store, by state.\n# TYPE kj_jobs gauge\n";
    for (const auto& [state, count] : store->count_jobs_by_state()) {
      out << "kj_jobs{state=\"" << store::to_string(state) << "\"} " << count << "\n";
    }
    if (stats) out << stats->prometheus();
    // Every worker registered in the store: on a shared database, those of every host.
    out << worker::registered_workers_prometheus(
        store->list_workers(),
        std::chrono::floor<std::chrono::microseconds>(std::chrono::system_clock::now()));
    res.set_content(out.str(), "text/plain; version=0.0.4");
  }

  // The owner (or an admin) removes a submission that is not being judged; rankings forget it.
  void delete_submission_of(const store::User& user, const store::Submission& s) {
    if (!user.is_admin && user.id != s.user_id) {
      throw ApiError(403, "not_yours",
                     "submission " + std::to_string(s.id) + " belongs to another user");
    }
    if (s.status == store::SubmissionStatus::running) {
      throw ApiError(409, "being_judged",
                     "submission " + std::to_string(s.id) +
                         " is being judged; delete it once it has a verdict");
    }
    if (!store->delete_submission(s.id)) {
      throw ApiError(404, "unknown_submission", "no submission " + std::to_string(s.id));
    }
    ++ranking_changes;
  }

  void delete_submission(const httplib::Request& req, httplib::Response& res) {
    const auto user = require_user(req);
    const auto s = submission(req.matches[1]);
    delete_submission_of(user, s);
    send_json(res, 200, {{"deleted", s.id}});
  }

  // ---- The KernelBot API popcorn-cli calls, at the server root (detail/kernelbot.h). The user
  // comes from X-Popcorn-Cli-Id, a kj API token (docs/server.md); errors are {"detail": ...}.

  store::User popcorn_user(const httplib::Request& req) {
    const std::string cli_id = req.get_header_value("X-Popcorn-Cli-Id");
    if (cli_id.empty()) {
      throw ApiError(401, "missing_cli_id",
                     "this request needs an X-Popcorn-Cli-Id header: put the CLI id the "
                     "organizers gave you in ~/.popcorn.yaml as 'cli_id: ...'");
    }
    auto user = store->user_for_token(cli_id);
    if (!user) {
      throw ApiError(401, "invalid_cli_id",
                     "the CLI id in ~/.popcorn.yaml is unknown to this server or was revoked; ask "
                     "the organizers for a new one");
    }
    return *user;
  }

  std::optional<store::User> optional_popcorn_user(const httplib::Request& req) {
    return req.has_header("X-Popcorn-Cli-Id") ? std::optional(popcorn_user(req)) : std::nullopt;
  }

  json kernelbot_task(const store::Leaderboard& lb) {
    try {
      const auto problem = problem::load(lb.problem_dir);
      json templates = json::object();
      for (const auto& [language, path] : problem.templates) templates[language] = path;
      json task = {{"lang", problem.lang},
                   {"description", problem.description},
                   {"ranking_by", problem::to_string(problem.ranking_by)},
                   {"tests", problem.tests},
                   {"benchmarks", problem.benchmarks},
                   {"templates", templates}};
      // The public cases a CPU worker benchmarks instead (kj's own task.yml key).
      if (!problem.cpu_benchmarks.empty()) task["cpu_benchmarks"] = problem.cpu_benchmarks;
      return task;
    } catch (const std::exception&) {
      return json::object();  // the leaderboard is listed; its jobs report the problem's error
    }
  }

  void kernelbot_leaderboards(const httplib::Request& req, httplib::Response& res) {
    const auto user = optional_popcorn_user(req);
    json list = json::array();
    for (const auto& lb : store->list_leaderboards(user && user->is_admin)) {
      list.push_back(detail::kernelbot_leaderboard(lb, kernelbot_task(lb)));
    }
    send_json(res, 200, list);
  }

  void kernelbot_gpus(const httplib::Request& req, httplib::Response& res) {
    send_json(res, 200, leaderboard(req.matches[1], optional_popcorn_user(req)).gpu_types);
  }

  // POST /{leaderboard}/{gpu}/{mode} and /submission/...: the multipart `file` part.
  SubmissionRequest kernelbot_submission_request(const httplib::Request& req) {
    SubmissionRequest r;
    r.leaderboard = req.matches[1];
    r.gpu = req.matches[2];
    r.mode = req.matches[3];
    if (req.is_multipart_form_data() && req.has_file("file")) {
      const auto file = req.get_file_value("file");
      r.code = file.content;
      r.file_name = file.filename;
      r.has_code = true;
    }
    return r;
  }

  json runner_queue(const std::string& gpu_type) {
    return detail::kernelbot_runner_queue(gpu_type, store->count_queued_jobs(gpu_type));
  }

  // popcorn-cli 1.3.16 and later for test, benchmark and leaderboard: queue, then poll
  // /user/submissions/{id}.
  void kernelbot_submit_background(const httplib::Request& req, httplib::Response& res) {
    const auto user = popcorn_user(req);
    const auto created = accept_submission(user, kernelbot_submission_request(req), res);
    send_json(res, 202,
              {{"status", "accepted"},
               {"details",
                {{"id", created.id},
                 {"leaderboard", created.leaderboard_name},
                 {"gpu", created.gpu_type},
                 {"mode", created.mode}}},
               {"runner_queue", runner_queue(created.gpu_type)}});
  }

  // popcorn-cli before 1.3.16, and profile mode since: the submission's progress as `status`
  // events in the response, then `result` (or `error` when the judge failed for good).
  void kernelbot_submit_streaming(const httplib::Request& req, httplib::Response& res) {
    const auto user = popcorn_user(req);
    const auto created = accept_submission(user, kernelbot_submission_request(req), res);
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");
    // Where the client reached this server: the base of the profile report's download URL.
    const std::string base = "http://" + req.get_header_value("Host");
    res.set_chunked_content_provider(
        "text/event-stream", [this, created, base](std::size_t, httplib::DataSink& sink) {
          auto status = [&](const std::string& message) {
            const std::string text = detail::sse_event("status", {{"message", message}});
            return sink.write(text.data(), text.size());
          };
          const std::string id = std::to_string(created.id);
          status("submission " + id + " accepted: " + created.leaderboard_name + " on " +
                 created.gpu_type + ", " + created.mode + " mode");
          auto since_keepalive = std::chrono::steady_clock::now();
          std::optional<int> last_position;
          SubmissionFollower follower;
          follower.progress = [&](const store::ProgressEvent& event) {
            const std::string message =
                detail::kernelbot_status_message(json::parse(event.event_json, nullptr, false));
            return message.empty() || status("submission " + id + ": " + message);
          };
          follower.waiting = [&](const store::Submission&, const std::vector<store::Job>& jobs) {
            const auto position = queue_position(jobs);
            if (position && position != last_position) {
              last_position = position;
              return status("submission " + id + ": waiting, place " + std::to_string(*position) +
                            " in the " + created.gpu_type + " queue");
            }
            if (std::chrono::steady_clock::now() - since_keepalive > std::chrono::seconds(15)) {
              since_keepalive = std::chrono::steady_clock::now();
              return sink.write(": keep-alive\n\n", 14);
            }
            return true;
          };
          follower.final = [&](const store::Submission& final_submission) {
            std::string text;
            if (final_submission.status == store::SubmissionStatus::failed) {
              const auto jobs = store->submission_jobs(final_submission.id);
              const std::string error = jobs.empty() ? "" : jobs.back().error;
              text = detail::sse_event("error",
                                       {{"detail", "submission " + id + " could not be judged (" +
                                                       final_submission.verdict + "): " + error},
                                        {"status_code", 500}});
            } else {
              text = detail::sse_event(
                  "result",
                  detail::kernelbot_result(final_submission, store->submission_runs(created.id),
                                           profile_download(final_submission, base)));
            }
            sink.write(text.data(), text.size());
          };
          follow_submission(created.id, 0, 0, follower);
          sink.done();
          return true;
        });
  }

  // A profile run's stored report for the KernelBot result, with its download URL.
  std::optional<detail::ProfileDownload> profile_download(const store::Submission& s,
                                                          const std::string& base) {
    const auto profile = stored_profile(s);
    if (!profile || !profile->report) return std::nullopt;
    auto report = store->run_file(profile->run.id, profile->report->name);
    if (!report) return std::nullopt;
    return detail::ProfileDownload{std::move(*report),
                                   base + "/user/submissions/" + std::to_string(s.id) + "/profile"};
  }

  // The caller's own submission (or any, for an admin).
  store::Submission own_submission(const store::User& user, const std::string& id_text) {
    const auto s = submission(id_text);
    if (!user.is_admin && user.id != s.user_id) {
      throw ApiError(403, "not_yours", "submission " + id_text + " belongs to another user");
    }
    return s;
  }

  void kernelbot_user_submissions(const httplib::Request& req, httplib::Response& res) {
    const auto user = popcorn_user(req);
    json list = json::array();
    for (const auto& s : listed_submissions(req, user)) {
      list.push_back(detail::kernelbot_submission_summary(s, store->submission_runs(s.id)));
    }
    send_json(res, 200, list);
  }

  void kernelbot_user_submission(const httplib::Request& req, httplib::Response& res) {
    const auto s = own_submission(popcorn_user(req), req.matches[1]);
    const auto jobs = store->submission_jobs(s.id);
    std::optional<store::Job> latest;
    for (const auto& job : jobs) {
      if (!latest || job.id > latest->id) latest = job;
    }
    json queue = runner_queue(s.gpu_type);
    if (const auto position = queue_position(jobs)) queue["position"] = *position;
    send_json(res, 200,
              detail::kernelbot_submission_details(s, store->submission_runs(s.id),
                                                   store->get_code(s.code_sha256).value_or(""),
                                                   latest, queue));
  }

  // popcorn-cli prints the result's profile.download_url; the report needs the CLI id.
  void kernelbot_profile_report(const httplib::Request& req, httplib::Response& res) {
    send_profile_report(own_submission(popcorn_user(req), req.matches[1]), res);
  }

  void kernelbot_delete_submission(const httplib::Request& req, httplib::Response& res) {
    const auto user = popcorn_user(req);
    const auto s = own_submission(user, req.matches[1]);
    delete_submission_of(user, s);
    send_json(res, 200, {{"status", "ok"}, {"submission_id", s.id}});
  }

  // popcorn-cli's `register`: GET /auth/init answers {"state": CLI id}, which it saves to
  // ~/.popcorn.yaml before sending the user to KernelBot's OAuth page (which kj has not). Off
  // unless the deployment turned on self-service registration: then each call creates a user
  // named popcorn-XXXXXXXX and gives its new token as the CLI id.
  void kernelbot_auth_init(const httplib::Request&, httplib::Response& res) {
    if (!options.popcorn_registration) {
      throw ApiError(403, "registration_closed",
                     "this kj server does not register CLI ids itself; ask the organizers for "
                     "one and put it in ~/.popcorn.yaml as 'cli_id: ...'");
    }
    std::random_device random;
    for (int attempt = 0; attempt < 8; ++attempt) {
      char name[32];
      std::snprintf(name, sizeof name, "popcorn-%08x", static_cast<unsigned>(random()));
      if (store->get_user(name)) continue;
      const auto user = store->create_user(name, false);
      const auto token = store->create_token(user.id, "popcorn-cli registration");
      send_json(res, 200, {{"state", token.token}, {"user", user.name}});
      return;
    }
    throw ApiError(500, "internal", "could not pick a free user name");
  }

  // Runs a KernelBot handler, errors as {"detail": ...} (what popcorn-cli prints).
  httplib::Server::Handler kernelbot_guarded(void (State::*handler)(const httplib::Request&,
                                                                    httplib::Response&)) {
    return [this, handler](const httplib::Request& req, httplib::Response& res) {
      const auto fail = [&](int status, const std::string& code, const std::string& detail) {
        send_json(res, status, {{"detail", detail}, {"code", code}});
      };
      try {
        (this->*handler)(req, res);
      } catch (const ApiError& e) {
        fail(e.status, e.code, e.what());
      } catch (const store::StoreError& e) {
        fail(500, "store_error", e.what());
      } catch (const std::exception& e) {
        fail(500, "internal", e.what());
      }
    };
  }

  // Registered after /api and the pages: POST /{a}/{b}/{c} would take any three-part path.
  void kernelbot_routes() {
    http.Get("/leaderboards", kernelbot_guarded(&State::kernelbot_leaderboards));
    http.Get(R"(/gpus/([^/]+))", kernelbot_guarded(&State::kernelbot_gpus));
    http.Get("/auth/init", kernelbot_guarded(&State::kernelbot_auth_init));
    http.Get("/user/submissions", kernelbot_guarded(&State::kernelbot_user_submissions));
    http.Get(R"(/user/submissions/(\d+))", kernelbot_guarded(&State::kernelbot_user_submission));
    http.Delete(R"(/user/submissions/(\d+))",
                kernelbot_guarded(&State::kernelbot_delete_submission));
    http.Get(R"(/user/submissions/(\d+)/profile)",
             kernelbot_guarded(&State::kernelbot_profile_report));
    http.Post(R"(/submission/([^/]+)/([^/]+)/([^/]+))",
              kernelbot_guarded(&State::kernelbot_submit_background));
    http.Post(R"(/([^/]+)/([^/]+)/([^/]+))", kernelbot_guarded(&State::kernelbot_submit_streaming));
  }

  // Runs a handler, turning ApiError and store failures into JSON errors.
  httplib::Server::Handler guarded(void (State::*handler)(const httplib::Request&,
                                                          httplib::Response&)) {
    return [this, handler](const httplib::Request& req, httplib::Response& res) {
      try {
        (this->*handler)(req, res);
      } catch (const ApiError& e) {
        send_error(res, e.status, e.code, e.what());
      } catch (const store::StoreError& e) {
        send_error(res, 500, "store_error", e.what());
      } catch (const std::exception& e) {
        send_error(res, 500, "internal", e.what());
      }
    };
  }

  void api_routes() {
    http.Post("/api/submissions", guarded(&State::create_submission));
    http.Get("/api/submissions", guarded(&State::list_submissions));
    http.Get(R"(/api/submissions/(\d+))", guarded(&State::get_submission));
    http.Get(R"(/api/submissions/(\d+)/events)", guarded(&State::stream_events));
    http.Get(R"(/api/submissions/(\d+)/code)", guarded(&State::get_code));
    http.Get(R"(/api/submissions/(\d+)/profile)", guarded(&State::get_profile));
    http.Get(R"(/api/submissions/(\d+)/profile/report)", guarded(&State::get_profile_report));
    http.Post(R"(/api/submissions/(\d+)/hacked)", guarded(&State::mark_hacked));
    http.Delete(R"(/api/submissions/(\d+))", guarded(&State::delete_submission));
    http.Get("/api/leaderboards", guarded(&State::list_leaderboards));
    http.Get(R"(/api/leaderboards/([^/]+))", guarded(&State::get_leaderboard));
    http.Get(R"(/api/leaderboards/([^/]+)/ranking)", guarded(&State::get_ranking));
    http.Get(R"(/api/leaderboards/([^/]+)/template)", guarded(&State::get_template));
    http.Post("/api/admin/users", guarded(&State::create_user));
    http.Post("/api/admin/tokens", guarded(&State::create_token));
    http.Post("/api/admin/leaderboards", guarded(&State::create_leaderboard));
    http.Put(R"(/api/admin/leaderboards/([^/]+)/deadline)", guarded(&State::set_deadline));
    http.Get("/api/openapi.json", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(detail::kOpenApiDocument), "application/json");
    });
    http.Get("/metrics", guarded(&State::metrics));
  }
};

Server::Server(std::shared_ptr<store::Store> store, ApiOptions options,
               std::shared_ptr<worker::WorkerStats> stats)
    : state_(std::make_unique<State>()) {
  state_->store = std::move(store);
  state_->options = std::move(options);
  state_->stats = std::move(stats);
  auto& http = state_->http;
  // JSON and multipart carry the source with some overhead; the handler enforces the exact limit.
  http.set_payload_max_length(state_->options.max_source_bytes * 2 + (64 << 10));
  // Progress streams hold a thread each while they last.
  http.new_task_queue = [] { return new httplib::ThreadPool(32); };
  http.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    const char* code = res.status == 404   ? "not_found"
                       : res.status == 413 ? "payload_too_large"
                       : res.status == 405 ? "method_not_allowed"
                                           : "bad_request";
    send_error(res, res.status, code, httplib::status_message(res.status));
    return httplib::Server::HandlerResponse::Handled;
  });
  state_->api_routes();
  detail::add_page_routes(
      http, state_->store,
      [state = state_.get()](const store::Leaderboard& lb, const std::string& gpu) {
        auto cached = state->cached_ranking(lb, gpu);
        // The entries share the cache entry's lifetime: a new object means a new ranking.
        return std::shared_ptr<const std::vector<store::RankedEntry>>(cached, &cached->entries);
      });
  state_->kernelbot_routes();
}

Server::~Server() { stop(); }

int Server::bind(const std::string& host, int port) {
  if (port == 0) {
    const int bound = state_->http.bind_to_any_port(host);
    if (bound <= 0) throw std::runtime_error("cannot bind " + host);
    return bound;
  }
  if (!state_->http.bind_to_port(host, port)) {
    throw std::runtime_error("cannot bind " + host + ":" + std::to_string(port));
  }
  return port;
}

void Server::serve() { state_->http.listen_after_bind(); }

void Server::stop() {
  {
    std::lock_guard lock(state_->stop_mutex);
    state_->stopping = true;
  }
  state_->stop_wake.notify_all();
  if (state_->stats) state_->stats->progress_changed();  // event streams see `stopping`
  state_->http.stop();
}

std::optional<store::Time> parse_time(const std::string& text) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &month, &day, &hour, &minute,
                  &second, &consumed) != 6) {
    return std::nullopt;
  }
  std::string rest = text.substr(static_cast<std::size_t>(consumed));
  if (!rest.empty() && rest.front() == '.') {
    std::size_t digits = 1;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
    rest = rest.substr(digits);
  }
  if (rest != "Z" && rest != "+00:00" && !rest.empty()) return std::nullopt;
  const std::chrono::year_month_day date{std::chrono::year(year),
                                         std::chrono::month(static_cast<unsigned>(month)),
                                         std::chrono::day(static_cast<unsigned>(day))};
  // %2d takes a sign: "T-1:-5:00" reads as negative fields.
  if (!date.ok() || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 ||
      second > 60) {
    return std::nullopt;
  }
  return std::chrono::sys_days(date) + std::chrono::hours(hour) + std::chrono::minutes(minute) +
         std::chrono::seconds(second);
}

std::string format_time(store::Time time) {
  const auto seconds = std::chrono::floor<std::chrono::seconds>(time);
  const std::time_t t = std::chrono::system_clock::to_time_t(seconds);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::vector<std::string> load_problem_leaderboards(store::Store& store,
                                                   const fs::path& problems_root,
                                                   const std::vector<std::string>& gpu_types) {
  std::vector<std::string> created;
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(problems_root)) {
    if (entry.is_directory() && fs::is_regular_file(entry.path() / "task.yml")) {
      dirs.push_back(entry.path());
    }
  }
  std::sort(dirs.begin(), dirs.end());
  for (const auto& dir : dirs) {
    const std::string name = dir.filename().string();
    if (store.get_leaderboard(name)) continue;
    try {
      const auto problem = problem::load(dir);
      store::NewLeaderboard lb;
      lb.name = name;
      lb.problem_dir = problem.dir.string();
      std::ifstream in(dir / "task.yml", std::ios::binary);
      std::ostringstream yaml;
      yaml << in.rdbuf();
      lb.task_yaml = yaml.str();
      lb.description = problem.description;
      lb.gpu_types = gpu_types;
      lb.gpu_types.insert(lb.gpu_types.end(), problem.gpus.begin(), problem.gpus.end());
      std::sort(lb.gpu_types.begin(), lb.gpu_types.end());
      lb.gpu_types.erase(std::unique(lb.gpu_types.begin(), lb.gpu_types.end()), lb.gpu_types.end());
      store.create_leaderboard(lb);
      created.push_back(name);
    } catch (const problem::ProblemError& e) {
      std::fprintf(stderr, "kj serve: skipping %s: %s\n", dir.string().c_str(), e.what());
    }
  }
  return created;
}

}  // namespace kj::server
