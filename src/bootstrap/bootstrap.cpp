// The bootstrap pipeline: corpus -> PyTorch run (step 1) -> translation (step 2) -> judge
// (step 3), with repair turns, a resumable journal and the final rows (docs/bootstrap.md).
#include "bootstrap/bootstrap.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <deque>
#include <fstream>
#include <iomanip>
#include <map>
#include <mutex>
#include <numeric>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "bootstrap/detail/scratch.h"
#include "datasets/datasets.h"
#include "problem/linear_regex.h"
#include "problem/problem.h"

namespace kj::bootstrap {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kTaskMount = "/kj/task";
constexpr std::size_t kFeedbackChars = 6000;

// Verdicts of rows that are not finished: a rerun tries them again.
bool finished(const json& row) {
  const std::string verdict = row.value("verdict", "");
  return verdict != "translator_error" && verdict != "internal_error";
}

std::string dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string fnv1a_hex(std::string_view text) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(hash));
  return buffer;
}

std::string tail(const std::string& text, std::size_t n) {
  return text.size() <= n ? text : "..." + text.substr(text.size() - n);
}

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
    text.replace(at, from.size(), to);
    at += to.size();
  }
  return text;
}

std::string triton_entrypoint_for(const CorpusRow& row) {
  return row.kind == "module" ? "ModelNew" : row.entrypoint + "_triton";
}

CorpusRow row_from_json(const json& object, const std::string& origin) {
  CorpusRow row;
  row.origin = origin;
  auto text = [&](const char* key) {
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  row.pt_code = text("pt_code");
  row.entrypoint = text("entrypoint");
  if (row.entrypoint.empty()) row.entrypoint = text("pt_entrypoint");
  row.tests_code = text("tests_code");
  if (text("kind") == "module") row.kind = "module";
  if (const auto id = object.find("id"); id != object.end() && !id->is_null()) {
    row.row_id = id->is_string() ? id->get<std::string>() : id->dump();
  }
  if (row.pt_code.empty()) {
    row.parse_error = "no pt_code (a non-empty string) in the row";
  } else if (row.entrypoint.empty()) {
    row.parse_error = "no entrypoint or pt_entrypoint (a non-empty string) in the row";
  } else if (!std::regex_match(row.entrypoint, std::regex(R"([A-Za-z_]\w*)", kLinearRegex))) {
    row.parse_error = "entrypoint " + row.entrypoint + " is not a Python name";
  }
  if (row.row_id.empty()) {
    row.row_id = fnv1a_hex(row.pt_code + '\0' + row.entrypoint + '\0' + row.tests_code);
  }
  return row;
}

std::vector<CorpusRow> load_jsonl(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read the corpus " + path.string());
  std::vector<CorpusRow> rows;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string origin = path.filename().string() + ":" + std::to_string(number);
    const auto object = json::parse(line, nullptr, false);
    if (object.is_discarded() || !object.is_object()) {
      CorpusRow row;
      row.origin = origin;
      row.row_id = fnv1a_hex(line);
      row.parse_error = object.is_discarded()
                            ? "line " + std::to_string(number) + " is not JSON"
                            : "line " + std::to_string(number) + " is not a JSON object";
      rows.push_back(std::move(row));
      continue;
    }
    rows.push_back(row_from_json(object, origin));
  }
  return rows;
}

std::vector<CorpusRow> load_kernelbench_dir(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".py") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  static const std::regex model_class(R"((^|\n)class\s+Model\b)", kLinearRegex);
  static const std::regex get_inputs(R"((^|\n)def\s+get_inputs\s*\()", kLinearRegex);
  std::vector<CorpusRow> rows;
  for (const auto& file : files) {
    CorpusRow row;
    row.origin = fs::relative(file, dir).string();
    row.row_id = row.origin;
    row.kind = "module";
    row.entrypoint = "Model";
    row.pt_code = detail::read_file(file);
    if (!std::regex_search(row.pt_code, model_class) ||
        !std::regex_search(row.pt_code, get_inputs)) {
      row.parse_error = "not a KernelBench-style file: it needs class Model and get_inputs()";
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// -- step 1 --------------------------------------------------------------------------------------

struct ProbeResult {
  bool runs = false;
  std::string stdout_text;
  std::string stderr_text;
  int calls = 0;
  int biggest = 0;
  std::string error;  // why the row stops after step 1
  bool infrastructure = false;
};

json row_file(const CorpusRow& row) {
  return {{"entrypoint", row.entrypoint}, {"tests_code", row.tests_code}, {"kind", row.kind}};
}

// The probe's run: forked from `zygote` when there is one (torch is imported already, so the
// GPU's lease is not held through the imports), else a sandbox of its own started now.
sandbox::Outcome probe_run(const CorpusRow& row, const judge::Environment& environment,
                           const BootstrapOptions& options, judge::HarnessZygote* zygote) {
  std::vector<std::pair<std::string, std::string>> files = {
      {"row.json", dump(row_file(row))},
      {"pt_program.py", row.pt_code},
      {"program.py", row.tests_code.empty() ? row.pt_code : row.pt_code + "\n\n" + row.tests_code}};
  sandbox::Limits limits;
  limits.memory_bytes = options.memory_bytes;
  limits.wall = std::chrono::duration_cast<std::chrono::milliseconds>(options.test_timeout);
  if (zygote != nullptr && !zygote->failed()) {
    const nlohmann::json job = {
        {"protocol", 1}, {"mode", "bootstrap_probe"}, {"task_dir", kTaskMount}};
    sandbox::Outcome outcome;
    {
      // The GPU is leased like an evaluation's (judge.h): no other run's kernels beside it.
      const judge::GpuLease lease(environment.device);
      outcome = zygote->fork_run(files, job.dump(), limits);
    }
    // A zygote that could not start it is not the row's doing: run it the zygote-less way
    // (the lane replaces the zygote before its next row).
    if (outcome.started || !outcome.setup_error.starts_with("zygote")) return outcome;
  }
  detail::ScratchDir scratch("kj-bootstrap-pt-");
  // A world-readable folder inside the private scratch: the sandbox's user reads it.
  const fs::path task = scratch.path() / "task";
  fs::create_directories(task);
  for (const auto& [name, content] : files) detail::write_file(task / name, content);
  sandbox::Spec spec = judge::harness_sandbox(environment);
  spec.argv = {environment.python.string(), "-m", "kj_harness.bootstrap", "probe", kTaskMount};
  spec.binds.push_back({task.string(), kTaskMount, false, false});
  spec.workdir = "/tmp";
  spec.limits = limits;
  sandbox::Outcome outcome;
  {
    const judge::GpuLease lease(environment.device);
    outcome = sandbox::run(spec);
  }
  return outcome;
}

ProbeResult run_pytorch(const CorpusRow& row, const judge::Environment& environment,
                        const BootstrapOptions& options, judge::HarnessZygote* zygote) {
  ProbeResult probe;
  sandbox::Outcome outcome;
  try {
    outcome = probe_run(row, environment, options, zygote);
  } catch (const std::exception& e) {
    probe.infrastructure = true;
    probe.error = e.what();
    return probe;
  }
  probe.stdout_text = outcome.stdout_data;
  probe.stderr_text = outcome.stderr_data;
  if (!outcome.started) {
    probe.infrastructure = true;
    probe.error = "the sandbox could not start: " + outcome.setup_error;
    return probe;
  }
  if (outcome.limit != sandbox::LimitHit::none) {
    probe.error = "the PyTorch program hit the " + sandbox::to_string(outcome.limit) + " limit";
    return probe;
  }
  // The last line is ours: it is written after the row's code ran.
  json facts;
  std::istringstream lines(outcome.result_data);
  for (std::string line; std::getline(lines, line);) {
    auto parsed = json::parse(line, nullptr, false);
    if (parsed.is_object()) facts = std::move(parsed);
  }
  if (!facts.is_object()) {
    probe.error = outcome.signal ? "the PyTorch program was killed by signal " +
                                       std::to_string(*outcome.signal)
                                 : "the PyTorch program reported nothing (exit status " +
                                       std::to_string(outcome.exit_code.value_or(-1)) + ")";
    return probe;
  }
  probe.runs = facts.value("runs", false) && outcome.exit_code == 0;
  probe.calls = facts.value("calls", 0);
  probe.biggest = facts.value("biggest", 0);
  probe.error = facts.value("error", "");
  if (!probe.runs && probe.error.empty()) probe.error = "the PyTorch program failed";
  return probe;
}

// -- step 3 --------------------------------------------------------------------------------------

json test_cases(const CorpusRow& row, const ProbeResult& probe, int random_inputs) {
  json cases = json::array();
  const bool recorded = row.kind == "function" && !row.tests_code.empty();
  const int calls = recorded ? std::max(1, probe.calls) : 1;
  for (int i = 0; i < calls; ++i) cases.push_back({{"case", i}, {"seed", 0}});
  for (int i = 0; i < random_inputs; ++i) {
    cases.push_back({{"case", i % calls}, {"seed", 1000 + i}});
  }
  return cases;
}

// A temporary problem in the reference-kernels format: the reference calls the PyTorch
// entrypoint, the submission wraps the translation's entrypoint (harness/kj_harness/bootstrap.py).
void write_problem(const fs::path& dir, const CorpusRow& row, const json& tests,
                   const json& benchmark, const BootstrapOptions& options) {
  fs::create_directories(dir);
  detail::write_file(dir / "row.json", dump(row_file(row)));
  detail::write_file(dir / "pt_program.py", row.pt_code);
  detail::write_file(dir / "bootstrap_task.py",
                     "from kj_harness.bootstrap import (check_implementation, entry_point,\n"
                     "                                  generate_input, ref_kernel)\n");
  detail::write_file(dir / "reference.py",
                     "from bootstrap_task import check_implementation, generate_input, "
                     "ref_kernel\n");
  std::ostringstream yaml;
  yaml << "# A bootstrap row as a problem: the translation against the PyTorch entrypoint.\n"
       << "files:\n"
       << "  - {\"name\": \"submission.py\", \"source\": \"@SUBMISSION@\"}\n";
  for (const char* name : {"reference.py", "bootstrap_task.py", "pt_program.py", "row.json"}) {
    yaml << "  - {\"name\": \"" << name << "\", \"source\": \"" << name << "\"}\n";
  }
  yaml << "lang: \"py\"\n"
       << "kernel_language: triton\n"
       << "description: \"Triton translation of " << row.entrypoint << "\"\n"
       << "tests:\n";
  for (const auto& test : tests) yaml << "  - " << test.dump() << "\n";
  yaml << "benchmarks:\n  - " << benchmark.dump() << "\n"
       << "ranking_by: \"last\"\n"
       << "test_timeout: " << options.test_timeout.count() << "\n"
       << "benchmark_timeout: " << options.benchmark_timeout.count() << "\n"
       << "ranked_timeout: " << options.benchmark_timeout.count() << "\n";
  detail::write_file(dir / "task.yml", yaml.str());
}

std::string submission_source(const Translation& translation) {
  return translation.code + "\n\n# Added by kj bootstrap: the judge calls custom_kernel.\n" +
         "import bootstrap_task as _kj_bootstrap_task\n" +
         "custom_kernel = _kj_bootstrap_task.entry_point(" + translation.entrypoint + ")\n";
}

// What went wrong, for the model's next turn and the row's reason.
std::string describe_failure(const judge::EvalResult& result) {
  std::ostringstream out;
  out << "Verdict: " << judge::to_string(result.verdict) << ". " << result.reason << "\n";
  auto error_text = [&](const judge::ErrorInfo& error) {
    out << error.type << ": " << error.message << "\n";
    if (!error.traceback.empty()) out << tail(error.traceback, 3000) << "\n";
  };
  if (result.error) error_text(*result.error);
  for (const auto* cases : {&result.tests, &result.benchmarks}) {
    for (const auto& test : *cases) {
      if (test.status == "pass") continue;
      out << "Failing case: " << judge::describe_args(test.spec) << "\n";
      if (!test.message.empty()) out << test.message << "\n";
      if (test.error) error_text(*test.error);
      break;
    }
  }
  if (!result.outcome.stderr_data.empty() && !result.error) {
    out << "stderr:\n" << tail(result.outcome.stderr_data, 1500) << "\n";
  }
  return tail(out.str(), kFeedbackChars);
}

double max_error_of(const judge::EvalResult& result) {
  static const std::regex pattern(R"(max_abs_error=([-+0-9.eEinfa]+))", kLinearRegex);
  double worst = 0;
  for (const auto& test : result.tests) {
    std::smatch match;
    if (std::regex_search(test.message, match, pattern)) {
      try {
        worst = std::max(worst, std::stod(match[1].str()));
      } catch (const std::exception&) {
      }
    }
  }
  return worst;
}

std::string repair_prompt(const std::string& feedback) {
  return "Your translation failed the judge.\n\n" + feedback +
         "\nFix it and reply with the complete corrected code in one ```python block.";
}

// Seconds a row spent in each step, kept in the journal (`elapsed_s`) for finding where a row's
// time goes; rows.jsonl leaves them out, so that reruns write the same rows.
class StepClock {
 public:
  template <typename F>
  auto operator()(const char* step, F&& f) {
    const auto start = std::chrono::steady_clock::now();
    struct Add {
      nlohmann::json& into;
      const char* step;
      std::chrono::steady_clock::time_point start;
      ~Add() {
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        into[step] = into.value(step, 0.0) + s;
      }
    } add{seconds_, step, start};
    return f();
  }
  // The judge's timeline of one evaluation (stage, seconds since the job arrived), by step.
  void stages(const char* step, const judge::EvalResult& result) {
    nlohmann::json events = nlohmann::json::array();
    for (const auto& [what, t] : result.timeline) events.push_back({what, t});
    stages_[step] = std::move(events);
  }
  const nlohmann::json& seconds() const { return seconds_; }
  const nlohmann::json& stages() const { return stages_; }

 private:
  nlohmann::json seconds_ = nlohmann::json::object();
  nlohmann::json stages_ = nlohmann::json::object();
};

// Journal-only keys: where the row's time went. rows.jsonl leaves them out.
constexpr const char* kElapsedKey = "elapsed_s";
constexpr const char* kStagesKey = "stages_s";

// `zygote`: the lane's, when it has one; the row's evaluations are forked from it.
json process_row(const CorpusRow& row, Translator& translator,
                 const judge::Environment& environment, const BootstrapOptions& options,
                 StepClock& clock, judge::HarnessZygote* zygote) {
  json out = {{"row_id", row.row_id},
              {"origin", row.origin},
              {"kind", row.kind},
              {"pt_code", row.pt_code},
              {"entrypoint", row.entrypoint},
              {"pt_entrypoint", row.entrypoint},
              {"tests_code", row.tests_code},
              {"triton_code", ""},
              {"triton_entrypoint", ""},
              {"reasoning", ""},
              {"messages", json::array()},
              {"prompt", json::array()},
              {"stop_reason", ""},
              {"pt_code_runs", false},
              {"stdout", ""},
              {"stderr", ""},
              {"tests", ""},
              {"verdict", ""},
              {"reason", ""},
              {"turns", 0},
              {"pass_turn", nullptr},
              {"max_error", nullptr},
              {"speedup", nullptr},
              {"timings", json::array()}};
  if (!row.parse_error.empty()) {
    out["verdict"] = "unparsed";
    out["reason"] = row.parse_error;
    return out;
  }
  // The row's judged evaluations are forked from the lane's zygote; without one they run in
  // harnesses started ahead (sandbox set up, torch imported) while the PyTorch program runs:
  // the test evaluation's and, when timing, the timed one's. A later turn's are started as the
  // turn before begins. A fresh sandbox per evaluation either way.
  sandbox::Limits limits;
  limits.memory_bytes = options.memory_bytes;
  std::deque<std::unique_ptr<judge::WarmHarness>> ahead;
  auto start_ahead = [&] {
    if (zygote != nullptr) return;
    try {
      ahead.push_back(std::make_unique<judge::WarmHarness>(environment, limits));
    } catch (const std::exception&) {
      // the evaluation then starts its own harness
    }
  };
  // The harness for the evaluation about to run; `more`: another evaluation may follow it.
  auto next_warm = [&](bool more) {
    std::unique_ptr<judge::WarmHarness> warm;
    if (!ahead.empty()) {
      warm = std::move(ahead.front());
      ahead.pop_front();
    }
    if (more && ahead.empty()) start_ahead();
    return warm;
  };
  start_ahead();
  if (options.timing) start_ahead();
  const ProbeResult probe =
      clock("pytorch", [&] { return run_pytorch(row, environment, options, zygote); });
  out["pt_code_runs"] = probe.runs;
  out["stdout"] = probe.stdout_text;
  out["stderr"] = probe.stderr_text;
  if (probe.infrastructure) {
    out["verdict"] = "internal_error";
    out["reason"] = probe.error;
    return out;
  }
  if (!probe.runs) {
    out["verdict"] = "pt_failed";
    out["reason"] = probe.error;
    return out;
  }
  if (probe.calls < 1) {
    out["verdict"] = "untestable";
    out["reason"] = probe.error;
    return out;
  }
  const json tests = test_cases(row, probe, options.random_inputs);
  const json benchmark = {{"case", probe.biggest}, {"seed", 7}};
  out["tests"] = dump(tests);
  detail::ScratchDir scratch("kj-bootstrap-judge-");
  write_problem(scratch.path() / "problem", row, tests, benchmark, options);
  const problem::Problem problem = problem::load(scratch.path() / "problem");

  const std::string expected = triton_entrypoint_for(row);
  std::vector<ChatMessage> messages = {{"user", render_prompt(options.prompt_template, row)}};
  out["prompt"] = json::array({{{"role", "user"}, {"content", messages.front().content}}});
  auto keep_messages = [&] {
    json list = json::array();
    for (const auto& m : messages) list.push_back({{"role", m.role}, {"content", m.content}});
    out["messages"] = std::move(list);
  };
  for (int turn = 1; turn <= std::max(1, options.turns); ++turn) {
    TranslatorReply reply;
    try {
      reply = clock("translate", [&] { return translator.complete(messages); });
    } catch (const std::exception& e) {
      keep_messages();
      out["verdict"] = "translator_error";
      out["reason"] = e.what();
      return out;
    }
    messages.push_back({"assistant", reply.content});
    out["turns"] = turn;
    out["reasoning"] = reply.reasoning;
    out["stop_reason"] = reply.finish_reason;
    std::string feedback;
    const auto translation = extract_translation(reply.content, expected);
    if (!translation) {
      out["verdict"] = "no_code";
      out["reason"] = "the reply holds no Python code block defining " + expected;
      feedback = "Your reply holds no ```python code block defining " + expected + ".";
    } else {
      out["triton_code"] = translation->code;
      out["triton_entrypoint"] = translation->entrypoint;
      judge::EvalRequest request;
      request.problem = &problem;
      request.submission_source = submission_source(*translation);
      request.submission_name = row.row_id + " turn " + std::to_string(turn);
      request.mode = judge::Mode::test;
      request.screen = options.screen;
      request.limits = limits;
      request.time_reference = false;
      // The timing (and a later turn with the same code) gets the test's compiled kernels.
      if (options.compile_cache)
        request.compile_cache_scope = "bootstrap, local user " + std::to_string(::getuid());
      // Another evaluation may follow: the timing, or the next turn's.
      auto warm = next_warm(options.timing || turn < options.turns);
      const judge::EvalResult judged =
          clock("test", [&] { return judge::evaluate(request, environment, warm.get(), zygote); });
      clock.stages("test", judged);
      out["verdict"] = judge::to_string(judged.verdict);
      out["reason"] = judged.reason;
      if (judged.verdict == judge::Verdict::accepted) {
        out["pass_turn"] = turn;
        out["max_error"] = max_error_of(judged);
        if (options.timing) {
          request.mode = judge::Mode::benchmark;
          request.time_reference = true;
          request.timing = options.timing_settings;
          warm = next_warm(turn < options.turns);
          const judge::EvalResult timed = clock(
              "timing", [&] { return judge::evaluate(request, environment, warm.get(), zygote); });
          clock.stages("timing", timed);
          if (timed.verdict != judge::Verdict::accepted) {
            out["verdict"] = judge::to_string(timed.verdict);
            out["reason"] = "while timing: " + timed.reason;
            out["pass_turn"] = nullptr;
            feedback = describe_failure(timed);
          } else if (!timed.benchmarks.empty()) {
            const auto& sample = timed.benchmarks.front();
            out["speedup"] = sample.speedup();
            out["timings"] =
                json::array({{{"spec", judge::describe_args(sample.spec)},
                              {"median_ns", sample.summary.median},
                              {"reference_median_ns", sample.reference_summary.median}}});
          }
        }
        if (feedback.empty()) break;
      } else {
        if (judged.verdict == judge::Verdict::internal_error) {
          keep_messages();
          return out;  // not the translation's fault: a rerun retries the row
        }
        feedback = describe_failure(judged);
      }
    }
    if (turn < options.turns) messages.push_back({"user", repair_prompt(feedback)});
  }
  keep_messages();
  return out;
}

// -- journal and output ---------------------------------------------------------------------------

// Reads the journal: row_id -> the last row written for it. A torn last line (an interrupted
// write) is cut off so appends start on a fresh line.
std::map<std::string, json> read_journal(const fs::path& path) {
  std::map<std::string, json> rows;
  if (!fs::exists(path)) return rows;
  std::string text = detail::read_file(path);
  const auto last_newline = text.rfind('\n');
  const std::size_t keep = last_newline == std::string::npos ? 0 : last_newline + 1;
  if (keep != text.size()) {
    fs::resize_file(path, keep);
    text.resize(keep);
  }
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    auto row = json::parse(line, nullptr, false);
    if (row.is_object() && row.contains("row_id") && row["row_id"].is_string()) {
      const std::string id = row["row_id"].get<std::string>();
      rows[id] = std::move(row);
    }
  }
  return rows;
}

// Appends whole lines with one write(2) each, then fsync: an interrupted run loses at most the
// row being written.
class Journal {
 public:
  explicit Journal(const fs::path& path)
      : fd_(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) {
    if (fd_ < 0) throw std::runtime_error("cannot open the journal " + path.string());
  }
  ~Journal() { ::close(fd_); }
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  void append(const json& row) {
    const std::string line = dump(row) + "\n";
    std::lock_guard lock(mutex_);
    std::size_t written = 0;
    while (written < line.size()) {
      const ssize_t n = ::write(fd_, line.data() + written, line.size() - written);
      if (n < 0) throw std::runtime_error("cannot write the journal");
      written += static_cast<std::size_t>(n);
    }
    ::fsync(fd_);
  }

 private:
  int fd_;
  std::mutex mutex_;
};

// " pytorch 7.1 s, test 3.0 s, ...": where a finished row's time went.
std::string steps_line(const json& seconds) {
  std::ostringstream line;
  line << std::fixed << std::setprecision(1);
  const char* separator = " ";
  for (const char* step : {"pytorch", "translate", "test", "timing", "row"}) {
    if (!seconds.contains(step)) continue;
    line << separator << step << " " << seconds[step].get<double>() << " s";
    separator = ", ";
  }
  return line.str();
}

std::string format_duration(double seconds) {
  const auto s = static_cast<long>(std::lround(seconds));
  std::ostringstream out;
  if (s >= 3600) out << s / 3600 << "h";
  if (s >= 60) out << (s % 3600) / 60 << "m";
  out << s % 60 << "s";
  return out.str();
}

BootstrapSummary summarize(const std::vector<json>& rows) {
  BootstrapSummary summary;
  summary.rows = rows.size();
  for (const auto& row : rows) {
    const std::string verdict = row.value("verdict", "");
    if (verdict == "unparsed") ++summary.unparsed;
    if (verdict == "translator_error") ++summary.translator_errors;
    if (row.value("pt_code_runs", false)) ++summary.pt_code_runs;
    if (row.value("turns", 0) > 0) ++summary.translated;
    if (verdict == "accepted") {
      ++summary.pass_at_n;
      if (row["pass_turn"] == 1) ++summary.pass_at_1;
      if (row["speedup"].is_number() && row["speedup"].get<double>() > 0) {
        summary.speedups.push_back(row["speedup"].get<double>());
      }
    }
  }
  return summary;
}

double quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double at = q * static_cast<double>(values.size() - 1);
  const auto low = static_cast<std::size_t>(std::floor(at));
  const auto high = static_cast<std::size_t>(std::ceil(at));
  return values[low] + (values[high] - values[low]) * (at - static_cast<double>(low));
}

// The boostrap_triton columns plus verdict, max_error, speedup, timings (datasets.h); our other
// columns stay in rows.jsonl.
void write_parquet(const std::vector<json>& rows, const fs::path& out, std::ostream& progress) {
  std::vector<json> table;
  table.reserve(rows.size());
  for (const auto& row : rows) table.push_back(data::boostrap_columns(row));
  try {
    data::write_boostrap_parquet(table, out);
  } catch (const std::exception& e) {
    progress << "bootstrap: no rows.parquet (rows.jsonl has every row): " << e.what() << std::endl;
  }
}

}  // namespace

std::vector<CorpusRow> load_corpus(const fs::path& path) {
  if (fs::is_directory(path)) return load_kernelbench_dir(path);
  if (!fs::is_regular_file(path)) throw std::runtime_error("no corpus at " + path.string());
  if (path.extension() == ".parquet") {
    throw std::runtime_error(
        path.string() +
        ": parquet corpora are read as JSONL here; convert first, e.g. "
        "python3 -c \"import pandas; pandas.read_parquet('IN').to_json('OUT.jsonl', "
        "orient='records', lines=True)\"");
  }
  auto rows = load_jsonl(path);
  std::map<std::string, int> seen;
  for (auto& row : rows) {
    if (const int n = ++seen[row.row_id]; n > 1) row.row_id += "#" + std::to_string(n);
  }
  return rows;
}

std::string default_prompt_template() {
  return R"(Translate this PyTorch program into Triton.

```python
{{pt_code}}
```

Write a complete Python module that imports torch, triton and triton.language as tl, defines one
or more @triton.jit kernels, and {{target}} The computation must happen in your Triton kernels:
use PyTorch only to allocate outputs and for shapes and strides. Keep the dtypes, shapes and
numerics of the original (float32 results are compared within 1e-4).

{{tests_section}}Reply with the whole module in one ```python code block.
)";
}

std::string render_prompt(std::string_view prompt_template, const CorpusRow& row) {
  const std::string target =
      row.kind == "module"
          ? "a class ModelNew(torch.nn.Module) taking the same constructor arguments as Model, "
            "whose forward takes the same inputs, returns the same outputs and launches your "
            "kernels (create parameters in the same order as Model, so the same seed gives the "
            "same weights)."
          : "a Python function " + triton_entrypoint_for(row) +
                " with the same signature and return value as " + row.entrypoint +
                " that launches your kernels.";
  const std::string tests_section =
      row.tests_code.empty()
          ? std::string()
          : "It is tested like this:\n\n```python\n" + row.tests_code + "\n```\n\n";
  std::string text(prompt_template);
  text = replace_all(text, "{{target}}", target);
  text = replace_all(text, "{{tests_section}}", tests_section);
  text = replace_all(text, "{{triton_entrypoint}}", triton_entrypoint_for(row));
  text = replace_all(text, "{{entrypoint}}", row.entrypoint);
  text = replace_all(text, "{{tests_code}}", row.tests_code);
  text = replace_all(text, "{{pt_code}}", row.pt_code);
  return text;
}

json BootstrapSummary::to_json() const {
  auto rate = [](std::size_t n, std::size_t of) {
    return of == 0 ? json(nullptr) : json(static_cast<double>(n) / static_cast<double>(of));
  };
  json out = {{"rows", rows},
              {"unparsed", unparsed},
              {"pt_code_runs", pt_code_runs},
              {"pt_code_runs_rate", rate(pt_code_runs, rows)},
              {"translated", translated},
              {"pass_at_1", pass_at_1},
              {"pass_at_n", pass_at_n},
              {"pass_at_1_rate", rate(pass_at_1, translated)},
              {"pass_at_n_rate", rate(pass_at_n, translated)},
              {"translator_errors", translator_errors},
              {"timed", speedups.size()}};
  if (!speedups.empty()) {
    double log_sum = 0;
    for (const double s : speedups) log_sum += std::log(s);
    out["speedup"] = {{"min", quantile(speedups, 0)},
                      {"p25", quantile(speedups, 0.25)},
                      {"median", quantile(speedups, 0.5)},
                      {"p75", quantile(speedups, 0.75)},
                      {"max", quantile(speedups, 1)},
                      {"geomean", std::exp(log_sum / static_cast<double>(speedups.size()))},
                      {"faster", std::count_if(speedups.begin(), speedups.end(),
                                               [](double s) { return s > 1; })}};
  }
  return out;
}

std::string BootstrapSummary::render() const {
  std::ostringstream out;
  auto pct = [](std::size_t n, std::size_t of) {
    std::ostringstream text;
    text << n << "/" << of;
    if (of > 0) {
      text << " (" << std::fixed << std::setprecision(1)
           << 100.0 * static_cast<double>(n) / static_cast<double>(of) << "%)";
    }
    return text.str();
  };
  out << "rows " << rows << " (unparsed " << unparsed << ", resumed " << resumed << ")\n"
      << "pt_code_runs " << pct(pt_code_runs, rows) << "\n"
      << "pass@1 " << pct(pass_at_1, translated) << ", pass@N " << pct(pass_at_n, translated)
      << " of rows translated\n";
  if (translator_errors > 0) {
    out << "translator errors " << translator_errors << " (not finished: rerun to retry)\n";
  }
  if (!speedups.empty()) {
    out << std::setprecision(3) << "speedup over PyTorch (" << speedups.size() << " timed): min "
        << quantile(speedups, 0) << ", median " << quantile(speedups, 0.5) << ", max "
        << quantile(speedups, 1) << "\n";
  }
  return out.str();
}

BootstrapSummary run_bootstrap(const std::vector<CorpusRow>& corpus, Translator& translator,
                               const judge::Environment& environment,
                               const BootstrapOptions& options, std::ostream& progress) {
  fs::create_directories(options.out_dir);
  const fs::path journal_path = options.out_dir / "journal.jsonl";
  std::map<std::string, json> done = read_journal(journal_path);
  std::vector<std::size_t> pending;
  std::size_t resumed = 0;
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    const auto it = done.find(corpus[i].row_id);
    if (it != done.end() && finished(it->second)) {
      ++resumed;
    } else {
      pending.push_back(i);
    }
  }
  progress << "bootstrap: " << corpus.size() << " rows, " << resumed << " already finished, "
           << pending.size() << " to run" << std::endl;

  Journal journal(journal_path);
  std::mutex mutex;  // guards done, the counters and progress
  std::atomic<std::size_t> next{0};
  std::size_t finished_now = 0, accepted_now = 0;
  const auto start = std::chrono::steady_clock::now();
  auto work = [&] {
    // The lane's zygote (replaced when it failed); none with --no-zygote or once the keeper
    // gave up on zygotes.
    sandbox::Limits limits;
    limits.memory_bytes = options.memory_bytes;
    judge::ZygoteKeeper zygotes(environment, limits, [&](const std::string& line) {
      std::lock_guard lock(mutex);
      progress << "bootstrap: " << line << std::endl;
    });
    while (true) {
      const std::size_t k = next.fetch_add(1);
      if (k >= pending.size()) return;
      const CorpusRow& row = corpus[pending[k]];
      json result;
      StepClock clock;
      judge::HarnessZygote* const forker = options.zygote ? zygotes.get() : nullptr;
      try {
        result = clock("row", [&] {
          return process_row(row, translator, environment, options, clock, forker);
        });
      } catch (const std::exception& e) {
        result = {{"row_id", row.row_id}, {"verdict", "internal_error"}, {"reason", e.what()}};
      }
      result[kElapsedKey] = clock.seconds();
      result[kStagesKey] = clock.stages();
      result = json::parse(dump(result));  // as a resumed row reads: invalid UTF-8 replaced
      journal.append(result);
      std::lock_guard lock(mutex);
      ++finished_now;
      if (result.value("verdict", "") == "accepted") ++accepted_now;
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double eta = elapsed / static_cast<double>(finished_now) *
                         static_cast<double>(pending.size() - finished_now);
      progress << "[" << finished_now << "/" << pending.size() << "] " << row.row_id << ": "
               << result.value("verdict", "") << " | pass " << accepted_now << "/" << finished_now
               << " (" << std::fixed << std::setprecision(1)
               << 100.0 * static_cast<double>(accepted_now) / static_cast<double>(finished_now)
               << "%) | elapsed " << format_duration(elapsed) << " | eta " << format_duration(eta)
               << " |" << steps_line(result[kElapsedKey]) << std::endl;
      done[row.row_id] = std::move(result);
    }
  };
  {
    std::vector<std::jthread> workers;
    const int threads =
        std::max(1, std::min<int>(options.concurrency, static_cast<int>(pending.size())));
    for (int i = 0; i < threads; ++i) workers.emplace_back(work);
  }

  std::vector<json> rows;
  rows.reserve(corpus.size());
  for (const auto& row : corpus) {
    rows.push_back(done.at(row.row_id));
    rows.back().erase(kElapsedKey);
    rows.back().erase(kStagesKey);
  }
  std::string text;
  for (const auto& row : rows) text += dump(row) + "\n";
  detail::write_file(options.out_dir / "rows.jsonl", text);
  write_parquet(rows, options.out_dir / "rows.parquet", progress);
  BootstrapSummary summary = summarize(rows);
  summary.resumed = resumed;
  detail::write_file(options.out_dir / "summary.json", summary.to_json().dump(2) + "\n");
  return summary;
}

}  // namespace kj::bootstrap
