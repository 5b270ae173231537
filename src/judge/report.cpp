// Reports of one evaluation: JSON for machines, text for people.
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "judge/detail/text.h"
#include "judge/judge.h"

namespace kj::judge {

namespace {

nlohmann::json error_json(const ErrorInfo& e) {
  return {{"stage", e.stage}, {"type", e.type}, {"message", e.message}, {"traceback", e.traceback}};
}

nlohmann::json summary_json(const bench::Summary& s) {
  return {{"n", s.n},          {"median_ns", s.median}, {"q1_ns", s.q1},       {"q3_ns", s.q3},
          {"iqr_ns", s.iqr()}, {"mean_ns", s.mean},     {"stdev_ns", s.stdev}, {"min_ns", s.min},
          {"max_ns", s.max}};
}

nlohmann::json case_json(const CaseResult& c, bool benchmark) {
  nlohmann::json out = {{"index", c.index},
                        {"phase", c.phase},
                        {"spec", c.spec},
                        {"status", c.status},
                        {"message", c.message}};
  if (c.error) out["error"] = error_json(*c.error);
  if (!c.seconds.empty()) out["seconds"] = c.seconds;
  if (benchmark) {
    out["samples_ns"] = c.samples;
    out["clock"] = c.clock;
    out["method"] = c.method;
    out["stop_reason"] = c.stop_reason;
    out["batch"] = c.batch;
    out["at_launch_floor"] = c.at_launch_floor;
    out["rechecked"] = c.rechecked;
    if (!c.recheck_path.empty()) out["recheck_path"] = c.recheck_path;
    out["other_stream_samples"] = c.other_stream_samples;
    if (!c.timing.empty()) out["timing"] = c.timing;
    if (!c.timing_note.empty()) out["timing_note"] = c.timing_note;
    out["sm_clock_mhz"] = c.sm_clock_mhz;
    out["summary"] = summary_json(c.summary);
    if (c.median_clock_mhz > 0) {
      out["summary"]["median_sm_clock_mhz"] = c.median_clock_mhz;
      out["summary"]["median_cycles"] = c.summary.median * c.median_clock_mhz / 1e3;
    }
    if (c.floor_ns > 0) {
      out["floor_ns"] = c.floor_ns;
      out["speed_of_light_pct"] = c.sol_pct;
    }
    if (c.reference_summary.n > 0) {
      out["reference_samples_ns"] = c.reference_samples;
      out["reference_summary"] = summary_json(c.reference_summary);
      out["speedup"] = c.speedup();
    }
  } else {
    out["elapsed_ns"] = c.elapsed_ns;
  }
  return out;
}

std::string tail(const std::string& text, std::size_t lines) {
  std::size_t pos = text.size();
  for (std::size_t i = 0; i <= lines && pos != std::string::npos && pos > 0; ++i) {
    pos = text.rfind('\n', pos - 1);
  }
  return pos == std::string::npos || pos == 0 ? text : text.substr(pos + 1);
}

std::string indent(const std::string& text, const std::string& prefix) {
  std::ostringstream out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out << prefix << line << "\n";
  return out.str();
}

std::string format_or_dash(bool known, const char* format, double value) {
  if (!known) return "–";
  char text[32];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// One row per benchmark: the figures a leaderboard shows, then notes and failures below it.
std::string benchmark_table(const std::vector<CaseResult>& benchmarks) {
  std::vector<std::vector<std::string>> rows = {
      {"bench", "arguments", "median", "IQR", "n", "clock", "cycles", "% SoL", "speedup"}};
  std::ostringstream notes;
  for (const auto& c : benchmarks) {
    const auto& s = c.summary;
    const bool pass = c.status == "pass";
    std::string clock = c.clock;
    if (c.batch > 1) clock += " x" + std::to_string(c.batch);
    rows.push_back({std::to_string(c.index) + (pass ? "" : " " + c.status), describe_args(c.spec),
                    pass ? bench::format_ns(s.median) : "–", pass ? bench::format_ns(s.iqr()) : "–",
                    pass ? std::to_string(s.n) : "–", pass ? clock : "–",
                    format_or_dash(pass && c.median_clock_mhz > 0, "%.0f",
                                   s.median * c.median_clock_mhz / 1e3),
                    format_or_dash(pass && c.floor_ns > 0, "%.1f %%", c.sol_pct),
                    pass && c.reference_summary.n > 0 ? bench::format_speedup(c.speedup()) : "–"});
    const std::string label = "  bench " + std::to_string(c.index) + ": ";
    if (pass) {
      notes << label << "mean " << bench::format_ns(s.mean) << ", min " << bench::format_ns(s.min)
            << ", stop: " << c.stop_reason;
      if (c.reference_summary.n > 0) {
        notes << ", reference median " << bench::format_ns(c.reference_summary.median);
      }
      if (c.floor_ns > 0) notes << ", physical floor " << bench::format_ns(c.floor_ns);
      notes << "\n";
      if (c.at_launch_floor)
        notes << label << "at launch floor: too short to rank apart reliably\n";
      if (c.other_stream_samples > 0) {
        notes << label << c.other_stream_samples
              << " samples left work on other streams: timed until the device was idle\n";
      }
      if (c.timing == "in_process" && !c.timing_note.empty()) {
        const std::string_view note = c.timing_note;
        notes << label << "timed in process: " << detail::cut(note.substr(0, note.find('\n')), 200)
              << "\n";
      }
    }
    if (!pass && !c.message.empty()) notes << indent(c.message, label);
    if (c.error) notes << indent(c.error->type + ": " + c.error->message, label);
  }
  std::vector<std::size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      // Display width: count UTF-8 lead bytes only ("µ" and "–" are two or three bytes).
      std::size_t width = 0;
      for (unsigned char ch : row[i]) width += (ch & 0xC0) != 0x80;
      widths[i] = std::max(widths[i], width);
    }
  }
  std::ostringstream out;
  for (const auto& row : rows) {
    out << " ";
    for (std::size_t i = 0; i < row.size(); ++i) {
      std::size_t width = 0;
      for (unsigned char ch : row[i]) width += (ch & 0xC0) != 0x80;
      const std::string pad(widths[i] - width + 2, ' ');
      out << " " << (i >= 2 ? pad.substr(2) + row[i] + "  " : row[i] + pad);  // numbers right
    }
    out << "\n";
  }
  return out.str() + notes.str();
}

}  // namespace

// Profile mode: per kernel captured, its duration, throughputs and top stall reasons.
std::string profile_text(const nlohmann::json& profile) {
  std::ostringstream out;
  if (profile.contains("message"))
    out << "profile: " << profile["message"].get<std::string>() << "\n";
  if (profile.contains("report"))
    out << "profile report: " << profile["report"].get<std::string>() << "\n";
  if (profile.contains("stored_report")) {
    out << "profile report: " << profile["stored_report"].value("name", std::string()) << " ("
        << profile["stored_report"].value("bytes", 0) << " bytes, kept with the run)\n";
  }
  if (!profile.contains("kernels")) return out.str();
  for (const auto& k : profile["kernels"]) {
    char line[160];
    std::snprintf(line, sizeof line,
                  "  %s: duration %s, memory %.1f %% of peak, SM %.1f %% of peak",
                  k.value("name", std::string("?")).substr(0, 60).c_str(),
                  bench::format_ns(k.value("duration_ns", 0.0)).c_str(),
                  k.value("memory_throughput_pct", 0.0), k.value("sm_throughput_pct", 0.0));
    out << line << "\n";
    for (const auto& stall : k.value("top_stalls", nlohmann::json::array())) {
      std::snprintf(line, sizeof line, "      stall %-24s %.2f cycles/instruction",
                    stall.value("reason", std::string()).c_str(),
                    stall.value("cycles_per_instruction", 0.0));
      out << line << "\n";
    }
  }
  return out.str();
}

nlohmann::json to_json(const EvalResult& r) {
  const auto& o = r.outcome;
  nlohmann::json out = {
      {"verdict", to_string(r.verdict)},
      {"reason", r.reason},
      {"mode", to_string(r.mode)},
      {"problem", r.problem},
      {"submission", r.submission},
      {"device", r.device},
      {"benchmark_set", r.benchmark_set},
      {"system", r.system},
      {"ranks", r.ranks},
      {"gpu_health",
       {{"checked", r.gpu_health.checked},
        {"ok", r.gpu_health.ok},
        {"leftover_processes", r.gpu_health.leftover_processes},
        {"memory_used_before_bytes", r.gpu_health.memory_used_before_bytes},
        {"memory_used_after_bytes", r.gpu_health.memory_used_after_bytes},
        {"message", r.gpu_health.message}}},
      {"tests", nlohmann::json::array()},
      {"benchmarks", nlohmann::json::array()},
      {"ranking_by", r.ranking_by},
      {"score_ns", r.score_ns ? nlohmann::json(*r.score_ns) : nlohmann::json(nullptr)},
      {"sandbox",
       {{"started", o.started},
        {"setup_error", o.setup_error},
        {"exit_code", o.exit_code ? nlohmann::json(*o.exit_code) : nlohmann::json(nullptr)},
        {"signal", o.signal ? nlohmann::json(*o.signal) : nlohmann::json(nullptr)},
        {"seccomp_violation", o.seccomp_violation},
        {"limit", sandbox::to_string(o.limit)},
        {"wall_ns", o.wall.count()},
        {"cpu_ns", o.cpu.count()},
        {"peak_memory_bytes", o.peak_memory_bytes},
        {"warnings", o.warnings}}},
      {"stdout", o.stdout_data},
      {"stderr", o.stderr_data},
      {"stdout_truncated", o.stdout_truncated},
      {"stderr_truncated", o.stderr_truncated},
  };
  out["timeline"] = nlohmann::json::array();
  for (const auto& [what, t] : r.timeline) out["timeline"].push_back({{"event", what}, {"t_s", t}});
  if (!r.process_times.empty()) out["process_times"] = r.process_times;
  for (const auto& c : r.tests) out["tests"].push_back(case_json(c, false));
  for (const auto& c : r.benchmarks) out["benchmarks"].push_back(case_json(c, true));
  if (r.mode == Mode::leaderboard) {
    out["ranked_tests"] = nlohmann::json::array();
    out["public_benchmarks"] = nlohmann::json::array();
    for (const auto& c : r.ranked_tests) out["ranked_tests"].push_back(case_json(c, false));
    for (const auto& c : r.public_benchmarks)
      out["public_benchmarks"].push_back(case_json(c, false));
  }
  out["speedup"] = r.speedup ? nlohmann::json(*r.speedup) : nlohmann::json(nullptr);
  if (r.mode == Mode::compare) {
    out["comparisons"] = nlohmann::json::array();
    for (const auto& c : r.comparisons) {
      const char* outcome =
          c.result.outcome == bench::PairedComparison::Outcome::a_faster   ? "a_faster"
          : c.result.outcome == bench::PairedComparison::Outcome::b_faster ? "b_faster"
                                                                           : "tie";
      out["comparisons"].push_back({{"index", c.index},
                                    {"trial", c.trial},
                                    {"spec", c.spec},
                                    {"pairs", c.result.n},
                                    {"ratio", c.result.ratio},
                                    {"lo", c.result.lo},
                                    {"hi", c.result.hi},
                                    {"confidence", c.result.confidence},
                                    {"outcome", outcome},
                                    {"text", c.result.text},
                                    {"stop_reason", c.stop_reason},
                                    {"samples_a_ns", c.samples_a},
                                    {"samples_b_ns", c.samples_b}});
    }
  }
  if (r.error) out["error"] = error_json(*r.error);
  if (!r.compilation.is_null()) out["compilation"] = r.compilation;
  if (!r.compile_cache.is_null()) out["compile_cache"] = r.compile_cache;
  if (!r.not_run.empty()) out["not_run"] = r.not_run;
  if (!r.profile.is_null()) out["profile"] = r.profile;
  out["screen"] = nlohmann::json::array();
  for (const auto& f : r.screen) {
    out["screen"].push_back({{"rule", f.rule},
                             {"reject", f.reject},
                             {"line", f.line},
                             {"excerpt", f.excerpt},
                             {"reason", f.reason}});
  }
  // What the submission's process printed (and a compiler's log of its code) need not be UTF-8,
  // which JSON text must be: the worker's dump() of such a result threw, so the job was released,
  // judged again up to its attempts and failed as internal_error. Invalid bytes become U+FFFD
  // here, once for every field.
  return nlohmann::json::parse(out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::string render_text(const EvalResult& r, bool verbose) {
  std::ostringstream out;
  const auto& o = r.outcome;
  out << r.problem << " / " << r.submission << "  (mode " << to_string(r.mode) << ", device "
      << r.device;
  if (r.system.contains("device_name")) out << ", " << r.system["device_name"].get<std::string>();
  out << ")\n";
  out << "verdict: " << to_string(r.verdict) << " — " << r.reason << "\n";
  for (const auto& f : r.screen) {
    out << "  screen " << (f.reject ? "REJECT " : "flag   ") << f.rule << " (line " << f.line
        << "): " << f.reason << "\n";
  }
  if (r.compilation.is_object()) {
    char took[32];
    std::snprintf(took, sizeof took, "%.1f s", r.compilation.value("seconds", 0.0));
    out << "compile: " << (r.compilation.value("ok", false) ? "ok" : "FAILED")
        << (r.compilation.value("cached", false) ? " (cached build)" : std::string(" in ") + took)
        << "\n";
    if (r.error && r.error->stage == "compile") {
      out << indent(r.error->message, "  | ");
    }
  }
  if (verbose && r.compile_cache.is_object()) {
    const auto count = [&](const char* key) { return r.compile_cache.value(key, 0); };
    out << "compile cache: " << count("restored") << " of " << count("offered")
        << " files restored (" << count("stale") << " from another toolchain), " << count("stored")
        << " stored from this run\n";
  }
  std::vector<const CaseResult*> tests;
  for (const auto& c : r.tests) tests.push_back(&c);
  for (const auto& c : r.public_benchmarks) {
    if (c.status != "pass") tests.push_back(&c);  // only failures of the untimed checks
  }
  for (const auto& c : r.ranked_tests) tests.push_back(&c);
  for (const CaseResult* t : tests) {
    const CaseResult& c = *t;
    char line[64];
    std::snprintf(line, sizeof line, "  %s %-3d %-5s ", c.phase == "ranked" ? "ranked" : "test  ",
                  c.index, c.status.c_str());
    out << line << describe_args(c.spec);
    if (c.status == "pass") out << "  (" << bench::format_ns(c.elapsed_ns) << ")";
    out << "\n";
    if (c.status == "fail" && !c.message.empty()) out << indent(c.message, "           ");
    if (c.error) out << indent(c.error->type + ": " + c.error->message, "           ");
  }
  if (!r.benchmarks.empty()) out << benchmark_table(r.benchmarks);
  if (r.profile.is_object()) out << profile_text(r.profile);
  if (r.score_ns) {
    out << "score (" << r.ranking_by << " of medians): " << bench::format_ns(*r.score_ns);
    if (r.speedup) {
      out << ", " << bench::format_speedup(*r.speedup) << " the reference's speed";
    }
    out << "\n";
  }
  for (const auto& c : r.comparisons) {
    out << "  compare " << c.index << " (" << describe_args(c.spec) << ")";
    if (c.trial > 0) out << " trial " << c.trial;
    out << ": " << c.result.text << "\n";
  }
  if (r.error && r.error->stage != "compile" && (verbose || !r.error->traceback.empty())) {
    out << "error in " << r.error->stage << ": " << r.error->type << ": " << r.error->message
        << "\n";
    if (!r.error->traceback.empty())
      out << indent(tail(r.error->traceback, verbose ? 200 : 15), "  | ");
  }
  out << "resources: wall " << bench::format_ns(static_cast<double>(o.wall.count())) << ", cpu "
      << bench::format_ns(static_cast<double>(o.cpu.count())) << ", peak memory "
      << (o.peak_memory_bytes >> 20) << " MiB\n";
  for (const auto& w : o.warnings) out << "warning: " << w << "\n";
  if (r.gpu_health.checked && !r.gpu_health.ok)
    out << "GPU UNHEALTHY after the run (the verdict stands): " << r.gpu_health.message << "\n";
  const bool show_streams =
      verbose || (r.verdict != Verdict::accepted && r.verdict != Verdict::wrong_answer);
  if (show_streams && !o.stderr_data.empty()) {
    out << "stderr (last lines" << (o.stderr_truncated ? ", truncated" : "") << "):\n"
        << indent(tail(o.stderr_data, verbose ? 200 : 20), "  | ");
  }
  if (verbose && !o.stdout_data.empty()) {
    out << "stdout" << (o.stdout_truncated ? " (truncated)" : "") << ":\n"
        << indent(tail(o.stdout_data, 200), "  | ");
  }
  return out.str();
}

}  // namespace kj::judge
