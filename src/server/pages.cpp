// The HTML pages `kj serve` serves beside the API. Every user-provided string (names, file names,
// reasons, logs, descriptions) goes through escape_html; links through encode_url_component.
#include "server/detail/pages.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "bench/stats.h"
#include "judge/judge.h"
#include "problem/problem.h"
#include "server/detail/archive.h"
#include "server/detail/html.h"
#include "server/server.h"
#include "worker/worker.h"

namespace kj::server::detail {
namespace {

using nlohmann::json;

constexpr std::size_t kLogDisplayBytes = 32 * 1024;  // per log on the submission page

store::Time now_us() {
  return std::chrono::floor<std::chrono::microseconds>(std::chrono::system_clock::now());
}

bool past(const std::optional<store::Time>& deadline) { return deadline && *deadline <= now_us(); }

bool is_final(store::SubmissionStatus status) {
  return status == store::SubmissionStatus::done || status == store::SubmissionStatus::failed;
}

// A page refused: the HTTP status and a sentence for the reader.
struct PageError : std::runtime_error {
  PageError(int status_code, const std::string& message)
      : std::runtime_error(message), status(status_code) {}
  int status;
};

std::string random_nonce() {
  std::random_device device;
  std::ostringstream out;
  out << std::hex;
  for (int i = 0; i < 4; ++i) out << device();
  return out.str();
}

std::string time_text(store::Time time) { return escape_html(format_time(time)); }

std::string user_link(const std::string& name) {
  return "<a href=\"/users/" + escape_html(encode_url_component(name)) + "\">" + escape_html(name) +
         "</a>";
}

std::string leaderboard_link(const std::string& name, const std::string& gpu = "") {
  std::string href = "/leaderboards/" + encode_url_component(name);
  if (!gpu.empty()) href += "?gpu=" + encode_url_component(gpu);
  return "<a href=\"" + escape_html(href) + "\">" + escape_html(gpu.empty() ? name : gpu) + "</a>";
}

std::string submission_link(store::Id id) {
  const std::string text = std::to_string(id);
  return "<a href=\"/submissions/" + text + "\">#" + text + "</a>";
}

std::string verdict_class(const std::string& verdict) {
  if (verdict == "accepted") return "ok";
  if (verdict.empty()) return "pending";
  return "bad";
}

std::string number_or_dash(const json& value, const char* format, double scale = 1) {
  if (!value.is_number()) return "–";
  return format_number(format, value.get<double>() * scale);
}

std::string seconds_or_dash(const json& nanoseconds) {
  return nanoseconds.is_number()
             ? escape_html(bench::format_seconds(nanoseconds.get<double>() * 1e-9))
             : "–";
}

// The arguments of a test or benchmark, "size=1024, seed=5".
std::string spec_text(const json& spec) {
  if (!spec.is_object()) return "";
  std::string out;
  for (const auto& [key, value] : spec.items()) {
    if (!out.empty()) out += ", ";
    out += key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return out;
}

std::string capped_log(const json& result, const std::string& key) {
  const auto it = result.find(key);
  if (it == result.end() || !it->is_string() || it->get<std::string>().empty()) return "";
  std::string text = it->get<std::string>();
  bool cut = result.value(key + "_truncated", false);
  if (text.size() > kLogDisplayBytes) {
    text = text.substr(text.size() - kLogDisplayBytes);
    cut = true;
  }
  return "<h4>" + key + (cut ? " (truncated; the end is shown)" : "") +
         "</h4><pre class=\"log\" id=\"" + key + "\">" + escape_html(text) + "</pre>";
}

json parse_object(const std::string& text) {
  json parsed = json::parse(text, nullptr, false);
  return parsed.is_object() ? parsed : json::object();
}

constexpr char kStyle[] = R"(
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1d2430;background:#f6f7f9}
header{background:#1d2430;color:#fff;padding:.6em 1.2em;display:flex;gap:1.2em;align-items:baseline}
header a{color:#fff;text-decoration:none}header .who{margin-left:auto;font-size:.9em}
main{max-width:1100px;margin:0 auto;padding:1em 1.2em}
table{border-collapse:collapse;background:#fff;margin:.5em 0 1em}
th,td{border:1px solid #d8dce3;padding:.3em .6em;text-align:left;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums}
pre{background:#fff;border:1px solid #d8dce3;padding:.6em;overflow:auto;max-height:28em;white-space:pre-wrap}
.ok{color:#137333;font-weight:600}.bad{color:#b3261e;font-weight:600}.pending{color:#8a6d00}
.muted{color:#5f6b7a}dl{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}
dt{font-weight:600}dd{margin:0}nav.gpus a{margin-right:.8em}svg{background:#fff;border:1px solid #d8dce3}
)";

}  // namespace

std::string token_cookie(const httplib::Request& req) {
  const std::string header = req.get_header_value("Cookie");
  std::size_t pos = 0;
  while (pos < header.size()) {
    std::size_t end = header.find(';', pos);
    if (end == std::string::npos) end = header.size();
    std::string pair = header.substr(pos, end - pos);
    pair.erase(0, pair.find_first_not_of(' '));
    const std::string prefix = std::string(kTokenCookie) + "=";
    if (pair.rfind(prefix, 0) == 0) return pair.substr(prefix.size());
    pos = end + 1;
  }
  return "";
}

namespace {

class Pages {
 public:
  Pages(std::shared_ptr<store::Store> store, RankingSource ranking)
      : store_(std::move(store)), ranking_(std::move(ranking)) {}

  using Handler = std::string (Pages::*)(const httplib::Request&, httplib::Response&,
                                         const std::optional<store::User>&);

  // Runs a page handler: the viewer from the Bearer header or the cookie, `?token=` turned into
  // the cookie, failures as an HTML page with their status.
  void serve(Handler handler, const httplib::Request& req, httplib::Response& res) {
    std::optional<store::User> viewer;
    try {
      if (req.method == "GET" && req.has_param("token")) {
        const std::string token = req.get_param_value("token");
        if (!store_->user_for_token(token)) throw PageError(401, "That token is not valid.");
        set_token_cookie(res, token);
        res.set_redirect(req.path, 303);
        return;
      }
      viewer = user_of(req);
      const std::string body = (this->*handler)(req, res, viewer);
      if (res.status == 302 || res.status == 303) return;
      send_page(res, res.status == -1 ? 200 : res.status, body, viewer);
    } catch (const PageError& e) {
      std::string body = "<h1>" + std::to_string(e.status) + " " +
                         escape_html(httplib::status_message(e.status)) + "</h1><p>" +
                         escape_html(e.what()) + "</p>";
      if (e.status == 401) body += login_form("");
      send_page(res, e.status, body, viewer);
    } catch (const std::exception& e) {
      send_page(res, 500, "<h1>Server error</h1><p>" + escape_html(e.what()) + "</p>", viewer);
    }
  }

  std::string index(const httplib::Request&, httplib::Response&,
                    const std::optional<store::User>& viewer) {
    std::ostringstream out;
    out << "<h1>Leaderboards</h1><table id=\"leaderboards\"><tr><th>name</th><th>about</th>"
           "<th>deadline</th><th>GPU types</th><th>ranked users</th></tr>";
    for (const auto& lb : store_->list_leaderboards(viewer && viewer->is_admin)) {
      std::set<store::Id> ranked;
      std::string gpus;
      for (const auto& gpu : lb.gpu_types) {
        for (const auto& entry : *ranking_(lb, gpu)) ranked.insert(entry.user_id);
        gpus += leaderboard_link(lb.name, gpu) + " ";
      }
      out << "<tr class=\"leaderboard\"><td>" << leaderboard_link(lb.name) << "</td><td>"
          << escape_html(lb.description.substr(0, lb.description.find('\n')))
          << " <a href=\"/problems/" << escape_html(encode_url_component(lb.name))
          << "\">problem</a></td><td>" << deadline_text(lb.deadline) << "</td><td>" << gpus
          << "</td><td class=\"num\">" << ranked.size() << "</td></tr>";
    }
    out << "</table>";
    return out.str();
  }

  std::string leaderboard(const httplib::Request& req, httplib::Response&,
                          const std::optional<store::User>& viewer) {
    const auto lb = visible_leaderboard(req.matches[1], viewer);
    const std::string gpu = shown_gpu(lb, req);
    std::ostringstream out;
    out << "<h1>" << escape_html(lb.name) << "</h1><p>"
        << escape_html(lb.description.substr(0, lb.description.find('\n')))
        << "</p><p>deadline: " << deadline_text(lb.deadline) << " · <a href=\"/problems/"
        << escape_html(encode_url_component(lb.name)) << "\">problem and template</a></p>";
    out << "<nav class=\"gpus\">GPU: ";
    for (const auto& type : lb.gpu_types) {
      out << (type == gpu ? "<strong>" + escape_html(type) + "</strong> "
                          : leaderboard_link(lb.name, type) + " ");
    }
    out << "</nav>";
    const auto ranking = ranking_(lb, gpu);
    if (ranking->empty()) {
      out << "<p id=\"empty\">Nobody is ranked on " << escape_html(gpu) << " yet.</p>";
      return out.str();
    }
    return out.str() + *ranking_table(lb.id, gpu, ranking);
  }

  // GET /leaderboards/{name}: the kept page for visitors without a token; others, and
  // failures, through serve().
  void leaderboard_route(const httplib::Request& req, httplib::Response& res) {
    const bool anonymous =
        !req.has_header("Authorization") && token_cookie(req).empty() && !req.has_param("token");
    std::shared_ptr<const CachedPage> page;
    try {
      if (anonymous) page = anonymous_leaderboard(req);
    } catch (const std::exception&) {
      page = nullptr;  // the error page comes from serve()
    }
    if (!page) return serve(&Pages::leaderboard, req, res);
    set_page_headers(res);
    res.set_header("Vary", "Accept-Encoding");
    if (accepts_gzip(req.get_header_value("Accept-Encoding"))) {
      res.set_header("Content-Encoding", "gzip");
      res.set_content(page->gzip, kHtmlType);
    } else {
      res.set_content(page->html, kHtmlType);
    }
  }

  std::string problem(const httplib::Request& req, httplib::Response&,
                      const std::optional<store::User>& viewer) {
    const auto lb = visible_leaderboard(req.matches[1], viewer);
    std::ostringstream out;
    out << "<h1>" << escape_html(lb.name) << "</h1><p>" << leaderboard_link(lb.name)
        << " · deadline: " << deadline_text(lb.deadline) << "</p>";
    out << "<pre class=\"description\">" << escape_html(lb.description) << "</pre>";
    try {
      const auto problem = problem::load(lb.problem_dir);
      out << "<p>" << problem.tests.size() << " tests, " << problem.benchmarks.size()
          << " benchmarks, ranked by " << escape_html(problem::to_string(problem.ranking_by))
          << " of the benchmark medians; kernel language: " << escape_html(problem.kernel_language)
          << ".</p><h2>Templates</h2><ul id=\"templates\">";
      for (const auto& [language, path] : problem.templates) {
        out << "<li><a href=\"/api/leaderboards/" << escape_html(encode_url_component(lb.name))
            << "/template?lang=" << escape_html(encode_url_component(language)) << "\">"
            << escape_html(language) << "</a> (" << escape_html(path) << ")</li>";
      }
      out << "</ul>";
    } catch (const std::exception& e) {
      out << "<p class=\"bad\">The problem directory cannot be read: " << escape_html(e.what())
          << "</p>";
    }
    out << "<p>Submit with <code>kj submit FILE --leaderboard " << escape_html(lb.name)
        << "</code>.</p>";
    return out.str();
  }

  std::string submission(const httplib::Request& req, httplib::Response& res,
                         const std::optional<store::User>& viewer) {
    const store::Id id = std::stoll(req.matches[1]);
    const auto s = store_->get_submission(id);
    if (!s) throw PageError(404, "There is no submission " + std::to_string(id) + ".");
    if (!may_read(*s, viewer)) {
      if (!viewer) throw PageError(401, "Log in to see this submission.");
      throw PageError(403,
                      "This submission belongs to another user; it becomes readable after the "
                      "leaderboard's deadline.");
    }
    const bool admin = viewer && viewer->is_admin;
    const auto runs = store_->submission_runs(s->id);
    std::string reason;
    for (const auto& run : runs) {
      if (run.secret && !admin) continue;
      reason = parse_object(run.result_json).value("reason", "");
      if (!reason.empty()) break;
    }
    std::optional<int> queue_place;
    for (const auto& job : store_->submission_jobs(s->id)) {
      if (!job.error.empty()) reason += (reason.empty() ? "" : " · ") + job.error;
      if (job.state == store::JobState::queued) queue_place = store_->queue_position(job.id);
    }
    const bool final = is_final(s->status);
    std::ostringstream out;
    out << "<h1>Submission #" << s->id << "</h1><dl>"
        << "<dt>user</dt><dd>" << user_link(s->user_name) << "</dd>"
        << "<dt>leaderboard</dt><dd>" << leaderboard_link(s->leaderboard_name) << "</dd>"
        << "<dt>file</dt><dd>" << escape_html(s->file_name) << " (<a href=\"/api/submissions/"
        << s->id << "/code\">code</a>)</dd>"
        << "<dt>GPU, mode</dt><dd>" << escape_html(s->gpu_type) << ", " << escape_html(s->mode)
        << "</dd><dt>submitted</dt><dd>" << time_text(s->created_at) << "</dd>"
        << "<dt>status</dt><dd id=\"status\">" << escape_html(store::to_string(s->status))
        << (queue_place ? ", place <span id=\"place\">" + std::to_string(*queue_place) +
                              "</span> in the " + escape_html(s->gpu_type) + " queue"
                        : "")
        << "</dd><dt>verdict</dt><dd id=\"verdict\" class=\"" << verdict_class(s->verdict) << "\">"
        << escape_html(s->verdict.empty() ? store::to_string(s->status) : s->verdict)
        << "</dd><dt>score</dt><dd id=\"score\">"
        << (s->score ? escape_html(bench::format_seconds(*s->score)) : "–")
        << (s->hacked ? " <span class=\"bad\">(marked hacked: not ranked)</span>" : "")
        << "</dd></dl>";
    out << "<div id=\"details\"><p id=\"reason\">" << escape_html(reason) << "</p>";
    for (const auto& run : runs) out << run_html(run, admin);
    out << profile_html(*s, runs, viewer && (admin || viewer->id == s->user_id));
    out << "</div>";
    if (!final) {
      const std::string nonce = random_nonce();
      res.set_header("Content-Security-Policy", csp(nonce));
      out << "<h2>Progress</h2><ol id=\"progress\"></ol>" << live_script(s->id, nonce);
    }
    return out.str();
  }

  std::string user(const httplib::Request& req, httplib::Response&,
                   const std::optional<store::User>& viewer) {
    const std::string name = req.matches[1];
    const auto shown = store_->get_user(name);
    if (!shown) throw PageError(404, "There is no user '" + name + "'.");
    const bool admin = viewer && viewer->is_admin;
    std::vector<store::Submission> readable;
    // Ranked scores are public (the leaderboard shows them) even while the details are private.
    std::vector<store::Submission> charted;
    std::size_t private_count = 0;
    std::map<std::string, std::optional<store::Leaderboard>> boards;
    for (auto& s : store_->user_submissions(shown->id, 0, 1000)) {
      auto [it, inserted] = boards.try_emplace(s.leaderboard_name);
      if (inserted) it->second = store_->get_leaderboard(s.leaderboard_name);
      const bool hidden = !it->second || it->second->visibility == store::Visibility::hidden;
      if (hidden && !admin) continue;
      charted.push_back(s);
      if (may_read(s, viewer)) {
        readable.push_back(std::move(s));
      } else {
        ++private_count;
      }
    }
    std::ostringstream out;
    out << "<h1>" << escape_html(shown->name) << "</h1>";
    out << "<h2>Best score over time</h2>" << progress_charts(charted);
    out << "<h2>Submissions</h2>";
    if (private_count > 0) {
      out << "<p class=\"muted\">" << private_count
          << " more are private until their leaderboard's deadline.</p>";
    }
    out << "<table id=\"submissions\"><tr><th>submission</th><th>leaderboard</th><th>GPU</th>"
           "<th>mode</th><th>verdict</th><th>score</th><th>submitted</th></tr>";
    for (const auto& s : readable) {
      out << "<tr><td>" << submission_link(s.id) << " " << escape_html(s.file_name) << "</td><td>"
          << leaderboard_link(s.leaderboard_name) << "</td><td>" << escape_html(s.gpu_type)
          << "</td><td>" << escape_html(s.mode) << "</td><td class=\"" << verdict_class(s.verdict)
          << "\">" << escape_html(s.verdict.empty() ? store::to_string(s.status) : s.verdict)
          << "</td><td class=\"num\">"
          << (s.score ? escape_html(bench::format_seconds(*s.score)) : "–") << "</td><td>"
          << time_text(s.created_at) << "</td></tr>";
    }
    out << "</table>";
    return out.str();
  }

  std::string login_page(const httplib::Request&, httplib::Response&,
                         const std::optional<store::User>& viewer) {
    std::string body = "<h1>Log in</h1>";
    if (viewer) body += "<p>You are logged in as " + user_link(viewer->name) + ".</p>";
    return body + login_form("");
  }

  void login(const httplib::Request& req, httplib::Response& res) {
    const std::string token = req.get_param_value("token");
    const auto user = token.empty() ? std::nullopt : store_->user_for_token(token);
    if (!user) {
      send_page(res, 401, "<h1>Log in</h1>" + login_form("That token is not valid."), std::nullopt);
      return;
    }
    set_token_cookie(res, token);
    res.set_redirect("/users/" + encode_url_component(user->name), 303);
  }

  void logout(const httplib::Request&, httplib::Response& res) {
    res.set_header("Set-Cookie",
                   std::string(kTokenCookie) + "=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict");
    res.set_redirect("/", 303);
  }

 private:
  std::optional<store::User> user_of(const httplib::Request& req) {
    std::string token;
    const std::string header = req.get_header_value("Authorization");
    if (header.rfind("Bearer ", 0) == 0) token = header.substr(7);
    if (token.empty()) token = token_cookie(req);
    if (token.empty()) return std::nullopt;
    return store_->user_for_token(token);
  }

  // The API's rule: the owner and admins always; anyone once the leaderboard's deadline passed.
  bool may_read(const store::Submission& s, const std::optional<store::User>& viewer) {
    if (viewer && (viewer->is_admin || viewer->id == s.user_id)) return true;
    const auto lb = store_->get_leaderboard(s.leaderboard_name);
    return lb && past(lb->deadline);
  }

  store::Leaderboard visible_leaderboard(const std::string& name,
                                         const std::optional<store::User>& viewer) {
    auto lb = store_->get_leaderboard(name);
    if (!lb || (lb->visibility == store::Visibility::hidden && !(viewer && viewer->is_admin))) {
      throw PageError(404, "There is no leaderboard '" + name + "'.");
    }
    return *lb;
  }

  static std::string deadline_text(const std::optional<store::Time>& deadline) {
    if (!deadline) return "none";
    return time_text(*deadline) + (past(deadline) ? " (closed)" : "");
  }

  using Ranking = std::shared_ptr<const std::vector<store::RankedEntry>>;

  // The GPU type a leaderboard page shows: ?gpu=, else the first anyone is ranked on.
  std::string shown_gpu(const store::Leaderboard& lb, const httplib::Request& req) {
    std::string gpu = req.get_param_value("gpu");
    if (!gpu.empty() &&
        std::find(lb.gpu_types.begin(), lb.gpu_types.end(), gpu) == lb.gpu_types.end()) {
      throw PageError(404, "Leaderboard '" + lb.name + "' has no GPU type '" + gpu + "'.");
    }
    if (gpu.empty()) {
      for (const auto& type : lb.gpu_types) {
        if (!ranking_(lb, type)->empty()) {
          gpu = type;
          break;
        }
      }
      if (gpu.empty() && !lb.gpu_types.empty()) gpu = lb.gpu_types.front();
    }
    return gpu;
  }

  // The leaderboard page as a visitor without a token sees it, whole and gzipped, kept with
  // the ranking it shows (as the API keeps its body): at 1,000 users the page is 257 KB.
  struct CachedPage {
    Ranking ranking;
    std::string html;
    std::string gzip;
  };

  std::shared_ptr<const CachedPage> anonymous_leaderboard(const httplib::Request& req) {
    const auto lb = visible_leaderboard(req.matches[1], std::nullopt);
    const std::string gpu = shown_gpu(lb, req);
    const auto ranking = ranking_(lb, gpu);
    const auto key = std::make_pair(lb.id, gpu);
    {
      std::lock_guard lock(tables_mutex_);
      const auto it = pages_.find(key);
      if (it != pages_.end() && it->second->ranking == ranking) return it->second;
    }
    httplib::Response scratch;
    std::string html = page_html(leaderboard(req, scratch, std::nullopt), std::nullopt);
    std::string compressed = gzip(html);
    auto page = std::make_shared<const CachedPage>(
        CachedPage{ranking, std::move(html), std::move(compressed)});
    std::lock_guard lock(tables_mutex_);
    pages_[key] = page;
    return page;
  }

  // The ranking's table, rendered once per ranking object (at 1,000 users, rendering it on every
  // request held the page at ~100 pages/s: docs/perf.md).
  std::shared_ptr<const std::string> ranking_table(store::Id leaderboard_id, const std::string& gpu,
                                                   const Ranking& ranking) {
    const auto key = std::make_pair(leaderboard_id, gpu);
    {
      std::lock_guard lock(tables_mutex_);
      const auto it = tables_.find(key);
      if (it != tables_.end() && it->second.first == ranking) return it->second.second;
    }
    std::string table =
        "<table id=\"ranking\"><tr><th>rank</th><th>user</th><th>score</th><th>speedup</th>"
        "<th>submitted</th><th>submission</th></tr>";
    for (const auto& entry : *ranking) {
      table += "<tr class=\"ranked\"><td class=\"num\">" + std::to_string(entry.rank) +
               "</td><td class=\"user\">" + user_link(entry.user_name) +
               "</td><td class=\"num score\">" + escape_html(bench::format_seconds(entry.score)) +
               "</td><td class=\"num\">" +
               (entry.speedup ? bench::format_speedup(*entry.speedup) : std::string("–")) +
               "</td><td>" + time_text(entry.submitted_at) + "</td><td>" +
               submission_link(entry.submission_id) + " " + escape_html(entry.file_name) +
               "</td></tr>";
    }
    table += "</table>";
    auto rendered = std::make_shared<const std::string>(std::move(table));
    std::lock_guard lock(tables_mutex_);
    tables_[key] = {ranking, rendered};
    return rendered;
  }

  // Profile mode: the summary, and for the owner and admins the stored report's download.
  std::string profile_html(const store::Submission& s, const std::vector<store::Run>& runs,
                           bool owner) {
    for (const auto& run : runs) {
      if (run.secret) continue;
      const json result = parse_object(run.result_json);
      if (!result.contains("profile")) continue;
      std::string out = "<section class=\"profile\"><h3>Profile</h3><pre id=\"profile-summary\">" +
                        escape_html(judge::profile_text(result["profile"])) + "</pre>";
      if (owner) {
        const std::string base = "/api/submissions/" + std::to_string(s.id) + "/profile";
        for (const auto& file : store_->run_files(s.id)) {
          if (file.run_id != run.id || file.name != worker::kProfileReportFile) continue;
          out += "<p><a id=\"profile-report\" href=\"" + base +
                 "/report\">Download the Nsight Compute report</a> (" + std::to_string(file.bytes) +
                 " bytes) · <a href=\"" + base + "\">summary as JSON</a></p>";
        }
      }
      return out + "</section>";
    }
    return "";
  }

  static std::string run_html(const store::Run& run, bool admin) {
    std::ostringstream out;
    out << "<section class=\"run\"><h3>" << escape_html(run.mode) << " run"
        << (run.secret ? " (secret inputs)" : "") << " on " << escape_html(run.runner)
        << ": <span class=\"" << (run.passed ? "ok\">passed" : "bad\">failed") << "</span>"
        << (run.score ? ", score " + escape_html(bench::format_seconds(*run.score)) : "")
        << "</h3>";
    if (run.secret && !admin) {
      out << "<p class=\"muted\">The details of runs on the leaderboard's secret inputs are for "
             "admins.</p></section>";
      return out.str();
    }
    const json result = parse_object(run.result_json);
    const auto tests = result.value("tests", json::array());
    if (!tests.empty()) {
      out << "<table class=\"tests\"><tr><th>test</th><th>arguments</th><th>status</th>"
             "<th>message</th></tr>";
      for (const auto& t : tests) {
        const std::string status = t.value("status", "");
        out << "<tr><td class=\"num\">" << number_or_dash(t.value("index", json()), "%.0f")
            << "</td><td>" << escape_html(spec_text(t.value("spec", json()))) << "</td><td class=\""
            << (status == "pass" || status == "passed" ? "ok" : "bad") << "\">"
            << escape_html(status) << "</td><td>" << escape_html(t.value("message", ""))
            << "</td></tr>";
      }
      out << "</table>";
    }
    const auto benchmarks = result.value("benchmarks", json::array());
    if (!benchmarks.empty()) {
      out << "<table class=\"benchmarks\"><tr><th>benchmark</th><th>arguments</th><th>status</th>"
             "<th>median</th><th>IQR</th><th>n</th><th>clock</th><th>timing</th><th>speedup</th>"
             "</tr>";
      for (const auto& b : benchmarks) {
        const json summary = b.value("summary", json::object());
        out << "<tr><td class=\"num\">" << number_or_dash(b.value("index", json()), "%.0f")
            << "</td><td>" << escape_html(spec_text(b.value("spec", json()))) << "</td><td>"
            << escape_html(b.value("status", "")) << "</td><td class=\"num median\">"
            << seconds_or_dash(summary.value("median_ns", json())) << "</td><td class=\"num\">"
            << seconds_or_dash(summary.value("iqr_ns", json())) << "</td><td class=\"num\">"
            << number_or_dash(summary.value("n", json()), "%.0f") << "</td><td>"
            << escape_html(b.value("clock", ""))
            // sealed or in_process (docs/sealed-timing.md), and why not sealed on hover.
            << "</td><td title=\"" << escape_html(b.value("timing_note", "")) << "\">"
            << escape_html(b.value("timing", "")) << "</td><td class=\"num\">"
            << (b.value("speedup", json()).is_number()
                    ? bench::format_speedup(b["speedup"].get<double>())
                    : std::string("–"))
            << "</td></tr>";
      }
      out << "</table>";
    }
    out << capped_log(result, "stdout") << capped_log(result, "stderr") << "</section>";
    return out.str();
  }

  // One step chart per leaderboard and GPU: the best accepted ranked score so far, over time.
  static std::string progress_charts(const std::vector<store::Submission>& submissions) {
    std::map<std::pair<std::string, std::string>, std::vector<const store::Submission*>> series;
    for (const auto& s : submissions) {
      if (s.mode == "leaderboard" && s.verdict == "accepted" && s.score && !s.hacked) {
        series[{s.leaderboard_name, s.gpu_type}].push_back(&s);
      }
    }
    if (series.empty()) return "<p class=\"muted\">No accepted ranked submissions yet.</p>";
    std::string out;
    for (auto& [key, points] : series) {
      std::sort(points.begin(), points.end(),
                [](const auto* a, const auto* b) { return a->created_at < b->created_at; });
      out += "<h3>" + leaderboard_link(key.first) + " on " + escape_html(key.second) + "</h3>" +
             step_chart(points);
    }
    return out;
  }

  static std::string step_chart(const std::vector<const store::Submission*>& points) {
    markup::ScoreChart chart;
    chart.css_class = "chart";
    chart.width = 640;
    chart.height = 220;
    chart.score_label = bench::format_seconds;
    const auto first = points.front()->created_at;
    chart.time_label = [first](double t) {
      return format_time(first + std::chrono::microseconds(std::llround(t * 1e6)));
    };
    for (const auto* s : points) {
      chart.points.push_back({std::chrono::duration<double>(s->created_at - first).count(),
                              *s->score,
                              "#" + std::to_string(s->id) + " " + format_time(s->created_at) +
                                  ": " + bench::format_seconds(*s->score)});
    }
    return markup::score_chart_svg(chart);
  }

  static std::string csp(const std::string& nonce) {
    return "default-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; script-src "
           "'nonce-" +
           nonce + "'";
  }

  // Follows the event stream; the verdict element gets the result without a reload, and the
  // details (tests, benchmarks, logs) are fetched once the submission is final.
  // Follows the event stream: each progress event as a line for people (docs/server.md lists
  // them), the place in the queue while waiting, then the verdict and the details, no reload.
  static std::string live_script(store::Id id, const std::string& nonce) {
    return "<script nonce=\"" + nonce + "\">(function(){var id=" + std::to_string(id) + R"(;
var verdict=document.getElementById('verdict'),status=document.getElementById('status'),
progress=document.getElementById('progress'),score=document.getElementById('score');
function describe(p){switch(p.event){
case 'claimed':return 'Judging on '+p.device+(p.attempt>1?' (attempt '+p.attempt+')':'');
case 'stage':return p.state==='started'?'Evaluation started ('+(p.mode||'')+' mode)':
'Evaluation finished'+(typeof p.seconds==='number'?' in '+p.seconds.toFixed(1)+' s':'')+(p.verdict?': '+p.verdict:'');
case 'verdict':return 'Verdict: '+p.verdict+(p.reason?' — '+p.reason:'');
case 'released':return 'Infrastructure fault, queued again'+(p.error?': '+p.error:'');
case 'gpu_unhealthy':return 'The GPU failed its health check: '+p.message;
default:return p.event||'';}}
function line(text){var li=document.createElement('li');li.textContent=text;progress.appendChild(li);}
var source=new EventSource('/api/submissions/'+id+'/events');
source.addEventListener('queue',function(e){var q=JSON.parse(e.data),place=document.getElementById('place');
if(place)place.textContent=q.position;else status.textContent='queued, place '+q.position+' in the queue';});
source.addEventListener('progress',function(e){var p;try{p=JSON.parse(e.data);}catch(x){return;}
line(describe(p));
if(p.event==='claimed'){status.textContent='running';verdict.textContent='running';}});
source.addEventListener('result',function(e){source.close();var s=JSON.parse(e.data);
status.textContent=s.status;verdict.textContent=s.verdict||s.status;
verdict.className=s.verdict==='accepted'?'ok':'bad';
fetch(location.pathname,{credentials:'same-origin'}).then(function(r){return r.text();}).then(function(t){
var fresh=new DOMParser().parseFromString(t,'text/html');
['details','score'].forEach(function(k){var n=fresh.getElementById(k);if(n)document.getElementById(k).replaceWith(n);});});});
})();</script>)";
  }

  static std::string login_form(const std::string& error) {
    return (error.empty() ? "" : "<p class=\"bad\">" + escape_html(error) + "</p>") +
           "<form method=\"post\" action=\"/login\"><label>API token <input type=\"password\" "
           "name=\"token\" autocomplete=\"off\" size=\"70\"></label> <button>Log in</button></form>"
           "<p class=\"muted\">An admin creates your user and token (<code>POST "
           "/api/admin/users</code>).</p>";
  }

  static void set_token_cookie(httplib::Response& res, const std::string& token) {
    res.set_header("Set-Cookie", std::string(kTokenCookie) + "=" + token +
                                     "; Path=/; HttpOnly; SameSite=Strict; Max-Age=2592000");
  }

  static constexpr char kHtmlType[] = "text/html; charset=utf-8";

  static void send_page(httplib::Response& res, int status, const std::string& body,
                        const std::optional<store::User>& viewer) {
    res.status = status;
    set_page_headers(res);
    res.set_content(page_html(body, viewer), kHtmlType);
  }

  static void set_page_headers(httplib::Response& res) {
    if (!res.has_header("Content-Security-Policy")) {
      res.set_header("Content-Security-Policy",
                     "default-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; "
                     "script-src 'none'");
    }
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Cache-Control", "no-store");
  }

  static std::string page_html(const std::string& body, const std::optional<store::User>& viewer) {
    std::string who = viewer ? user_link(viewer->name) +
                                   " <form method=\"post\" action=\"/logout\" style=\"display:"
                                   "inline\"><button>log out</button></form>"
                             : "<a href=\"/login\">log in</a>";
    return "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta "
           "name=\"viewport\" content=\"width=device-width\"><title>kerneljudge</title>"
           "<style>" +
           std::string(kStyle) +
           "</style></head><body><header><a href=\"/\"><strong>kerneljudge</strong>"
           "</a><a href=\"/\">leaderboards</a><span class=\"who\">" +
           who + "</span></header><main>" + body + "</main></body></html>\n";
  }

  std::shared_ptr<store::Store> store_;
  RankingSource ranking_;
  std::mutex tables_mutex_;  // guards tables_ and pages_
  std::map<std::pair<store::Id, std::string>, std::shared_ptr<const CachedPage>> pages_;
  std::map<std::pair<store::Id, std::string>,
           std::pair<Ranking, std::shared_ptr<const std::string>>>
      tables_;
};

}  // namespace

void add_page_routes(httplib::Server& http, std::shared_ptr<store::Store> store,
                     RankingSource ranking) {
  auto pages = std::make_shared<Pages>(std::move(store), std::move(ranking));
  auto page = [pages](Pages::Handler handler) {
    return [pages, handler](const httplib::Request& req, httplib::Response& res) {
      pages->serve(handler, req, res);
    };
  };
  http.Get("/", page(&Pages::index));
  http.Get(R"(/leaderboards/([^/]+))",
           [pages](const httplib::Request& req, httplib::Response& res) {
             pages->leaderboard_route(req, res);
           });
  http.Get(R"(/problems/([^/]+))", page(&Pages::problem));
  http.Get(R"(/submissions/(\d+))", page(&Pages::submission));
  http.Get(R"(/users/([^/]+))", page(&Pages::user));
  http.Get("/login", page(&Pages::login_page));
  http.Post("/login", [pages](const httplib::Request& req, httplib::Response& res) {
    pages->login(req, res);
  });
  http.Post("/logout", [pages](const httplib::Request& req, httplib::Response& res) {
    pages->logout(req, res);
  });
}

}  // namespace kj::server::detail
