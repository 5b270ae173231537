// The analysis commands: top contestants, one author's progression, a summary; rejudging.
#include "bench/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>
#include <sstream>

#include "datasets/datasets.h"
#include "datasets/detail/scoring.h"
#include "markup/markup.h"

namespace kj::data {
namespace {

store::Leaderboard require_leaderboard(store::Store& store, const std::string& name) {
  auto l = store.get_leaderboard(name);
  if (!l) throw DataError("no leaderboard named '" + name + "'");
  return *l;
}

std::string iso_time(store::Time t) {
  const std::time_t seconds =
      std::chrono::floor<std::chrono::seconds>(t).time_since_epoch().count();
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

nlohmann::json optional_number(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// Left-aligned text columns, two spaces apart.
std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()), 0);
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::ostringstream out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    out << line << "\n";
  }
  return out.str();
}

}  // namespace

std::vector<TopEntry> top_contestants(store::Store& store, const std::string& leaderboard,
                                      const std::string& gpu_type, int limit) {
  const auto l = require_leaderboard(store, leaderboard);
  std::map<store::Id, TopEntry> by_user;
  const store::Id ids[] = {l.id};
  store.for_each_submission_record(
      ids, store::Store::RecordCode::without, [&](const store::SubmissionRecord& r) {
        if (!gpu_type.empty() && r.submission.gpu_type != gpu_type) return;
        auto& entry = by_user[r.submission.user_id];
        entry.user_name = r.submission.user_name;
        ++entry.submissions;
        const auto score = detail::counted_score(r);
        if (!score) return;
        if (entry.best_submission_id == 0 || *score < entry.best_score) {
          entry.best_score = *score;
          entry.best_submission_id = r.submission.id;
          entry.gpu_type = r.submission.gpu_type;
        }
      });
  std::vector<TopEntry> entries;
  for (auto& [id, e] : by_user) {
    if (e.best_submission_id != 0) entries.push_back(std::move(e));
  }
  std::sort(entries.begin(), entries.end(), [](const TopEntry& a, const TopEntry& b) {
    if (a.best_score != b.best_score) return a.best_score < b.best_score;
    return a.best_submission_id < b.best_submission_id;
  });
  for (std::size_t i = 0; i < entries.size(); ++i) {
    entries[i].rank = i > 0 && entries[i].best_score == entries[i - 1].best_score
                          ? entries[i - 1].rank
                          : static_cast<int>(i + 1);
  }
  if (limit > 0 && entries.size() > static_cast<std::size_t>(limit)) entries.resize(limit);
  return entries;
}

std::vector<ProgressionPoint> author_progression(store::Store& store, const std::string& user,
                                                 const std::string& leaderboard) {
  const auto l = require_leaderboard(store, leaderboard);
  if (!store.get_user(user)) throw DataError("no user named '" + user + "'");
  std::vector<ProgressionPoint> points;
  const store::Id ids[] = {l.id};
  store.for_each_submission_record(ids, store::Store::RecordCode::without,
                                   [&](const store::SubmissionRecord& r) {
                                     if (r.submission.user_name != user) return;
                                     ProgressionPoint p;
                                     p.submission_id = r.submission.id;
                                     p.time = r.submission.created_at;
                                     p.gpu_type = r.submission.gpu_type;
                                     p.mode = r.submission.mode;
                                     p.verdict = r.submission.verdict;
                                     p.score = detail::counted_score(r);
                                     points.push_back(std::move(p));
                                   });
  std::stable_sort(points.begin(), points.end(),
                   [](const auto& a, const auto& b) { return a.time < b.time; });
  std::optional<double> best;
  for (auto& p : points) {
    if (p.score && (!best || *p.score < *best)) best = p.score;
    p.best_so_far = best;
  }
  return points;
}

std::vector<LeaderboardSummary> summary(store::Store& store) {
  std::vector<LeaderboardSummary> rows;
  std::map<store::Id, std::size_t> index;
  std::map<store::Id, std::set<store::Id>> users;
  for (const auto& l : store.list_leaderboards(true)) {
    index[l.id] = rows.size();
    LeaderboardSummary row;
    row.name = l.name;
    rows.push_back(std::move(row));
  }
  store.for_each_submission_record(
      {}, store::Store::RecordCode::without, [&](const store::SubmissionRecord& r) {
        auto& row = rows[index.at(r.submission.leaderboard_id)];
        ++row.submissions;
        users[r.submission.leaderboard_id].insert(r.submission.user_id);
        if (const auto score = detail::counted_score(r)) {
          ++row.scored;
          if (!row.best_score || *score < *row.best_score) row.best_score = score;
        }
        const auto t = r.submission.created_at;
        if (!row.first || t < *row.first) row.first = t;
        if (!row.last || t > *row.last) row.last = t;
      });
  for (const auto& [id, i] : index) {
    rows[i].users = static_cast<std::int64_t>(users[id].size());
  }
  return rows;
}

nlohmann::json to_json(const std::vector<TopEntry>& entries) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : entries) {
    out.push_back({{"rank", e.rank},
                   {"user", e.user_name},
                   {"best_score", e.best_score},
                   {"submission_id", e.best_submission_id},
                   {"gpu", e.gpu_type},
                   {"submissions", e.submissions}});
  }
  return out;
}

nlohmann::json to_json(const std::vector<ProgressionPoint>& points) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : points) {
    out.push_back({{"submission_id", p.submission_id},
                   {"time", iso_time(p.time)},
                   {"gpu", p.gpu_type},
                   {"mode", p.mode},
                   {"verdict", p.verdict},
                   {"score", optional_number(p.score)},
                   {"best_so_far", optional_number(p.best_so_far)}});
  }
  return out;
}

nlohmann::json to_json(const std::vector<LeaderboardSummary>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    out.push_back({{"leaderboard", r.name},
                   {"submissions", r.submissions},
                   {"users", r.users},
                   {"scored", r.scored},
                   {"best_score", optional_number(r.best_score)},
                   {"first", r.first ? nlohmann::json(iso_time(*r.first)) : nlohmann::json()},
                   {"last", r.last ? nlohmann::json(iso_time(*r.last)) : nlohmann::json()}});
  }
  return out;
}

std::string render_text(const std::vector<TopEntry>& entries) {
  std::vector<std::vector<std::string>> rows = {
      {"rank", "user", "best", "submission", "gpu", "submissions"}};
  for (const auto& e : entries) {
    rows.push_back({std::to_string(e.rank), e.user_name, bench::format_seconds(e.best_score),
                    std::to_string(e.best_submission_id), e.gpu_type,
                    std::to_string(e.submissions)});
  }
  return table(rows);
}

std::string render_text(const std::vector<ProgressionPoint>& points) {
  std::vector<std::vector<std::string>> rows = {
      {"time", "submission", "gpu", "mode", "verdict", "score", "best so far"}};
  for (const auto& p : points) {
    rows.push_back({iso_time(p.time), std::to_string(p.submission_id), p.gpu_type, p.mode,
                    p.verdict, p.score ? bench::format_seconds(*p.score) : "-",
                    p.best_so_far ? bench::format_seconds(*p.best_so_far) : "-"});
  }
  return table(rows);
}

std::string render_text(const std::vector<LeaderboardSummary>& rows) {
  std::vector<std::vector<std::string>> out = {
      {"leaderboard", "submissions", "users", "scored", "best", "first", "last"}};
  for (const auto& r : rows) {
    out.push_back({r.name, std::to_string(r.submissions), std::to_string(r.users),
                   std::to_string(r.scored),
                   r.best_score ? bench::format_seconds(*r.best_score) : "-",
                   r.first ? iso_time(*r.first) : "-", r.last ? iso_time(*r.last) : "-"});
  }
  return table(out);
}

std::string progression_svg(const std::vector<ProgressionPoint>& points, const std::string& title) {
  markup::ScoreChart chart;
  chart.title = title;
  chart.score_label = bench::format_seconds;
  chart.time_label = [](double t) {
    return iso_time(store::Time(std::chrono::microseconds(std::llround(t * 1e6))));
  };
  for (const auto& p : points) {
    if (!p.score) continue;
    chart.points.push_back(
        {std::chrono::duration<double>(p.time.time_since_epoch()).count(), *p.score,
         "#" + std::to_string(p.submission_id) + " " + bench::format_seconds(*p.score)});
  }
  return markup::score_chart_svg(chart);
}

std::vector<store::Id> queue_rejudge(store::Store& store, const std::string& leaderboard, int n,
                                     const std::string& gpu_type) {
  std::vector<store::Id> queued;
  for (const auto& e : top_contestants(store, leaderboard, "", n)) {
    store.enqueue(e.best_submission_id, gpu_type);
    queued.push_back(e.best_submission_id);
  }
  return queued;
}

}  // namespace kj::data
