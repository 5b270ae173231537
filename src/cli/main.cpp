// `kj` subcommands: thin glue over the judge.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "bootstrap/bootstrap.h"
#include "cli/agent_setup.h"
#include "cli/daemon.h"
#include "cli/eval.h"
#include "client/client.h"
#include "datasets/datasets.h"
#include "judge/judge.h"
#include "problem/problem.h"
#include "server/server.h"
#include "worker/worker.h"

namespace fs = std::filesystem;
using kj::judge::Verdict;
using namespace kj::cli;

namespace {

std::vector<fs::path> declared_solutions(const fs::path& dir) {
  std::vector<fs::path> files;
  const fs::path root = dir / "solutions";
  if (!fs::is_directory(root)) return files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file() &&
        (entry.path().extension() == ".py" || entry.path().extension() == ".cu")) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

int run_problem_check(const std::string& problem_dir, bool json, bool use_zygote,
                      const EnvOptions& options) {
  const kj::problem::Problem problem = kj::problem::load(problem_dir);
  for (const auto& w : problem.warnings) std::cerr << "warning: " << w << "\n";
  const auto files = declared_solutions(problem.dir);
  if (!json) {
    std::cout << problem.name << ": task.yml valid (" << problem.tests.size() << " tests, "
              << problem.benchmarks.size() << " benchmarks, ranking_by "
              << kj::problem::to_string(problem.ranking_by) << "); " << files.size()
              << " declared solutions\n";
  }
  const auto environment = options.environment();
  nlohmann::json report = nlohmann::json::array();
  int mismatches = 0;
  // The solutions are forked from one zygote, each in a sandbox of its own, as a worker of kj
  // serve judges them: the interpreter starts once, not once per file.
  std::optional<kj::judge::HarnessZygote> zygote;
  if (use_zygote && !files.empty()) {
    zygote.emplace(environment, options.request(problem, "", "", kj::judge::Mode::test).limits);
  }
  for (const auto& file : files) {
    const std::string source = read_text(file);
    const auto declared = kj::problem::declared_verdict(source);
    const std::string rel = fs::relative(file, problem.dir).string();
    if (!declared || !kj::judge::verdict_from_string(*declared)) {
      ++mismatches;
      const std::string why =
          declared ? "unknown verdict '" + *declared + "'" : "no '# expect:' line";
      if (!json) std::cout << "  MISSING  " << rel << ": " << why << "\n";
      report.push_back({{"file", rel}, {"declared", declared.value_or("")}, {"error", why}});
      continue;
    }
    const auto result = kj::judge::evaluate(
        options.request(problem, source, file.filename().string(), kj::judge::Mode::test),
        environment, nullptr, zygote ? &*zygote : nullptr);
    const std::string actual = kj::judge::to_string(result.verdict);
    // A lang: cu solution compiled on a host without a GPU: its compile was checked, no more.
    if (!result.not_run.empty() && *declared != "compile_error") {
      if (!json) std::cout << "  compiled " << rel << ": not run (" << result.not_run << ")\n";
      report.push_back({{"file", rel},
                        {"declared", *declared},
                        {"verdict", "not_run"},
                        {"reason", result.not_run},
                        {"ok", true}});
      continue;
    }
    const bool ok = actual == *declared;
    if (!ok) ++mismatches;
    if (!json) {
      std::cout << "  " << (ok ? "ok       " : "MISMATCH ") << rel << ": expected " << *declared
                << ", got " << actual << " — " << result.reason << "\n";
      if (!ok) std::cout << kj::judge::render_text(result, false);
    }
    report.push_back({{"file", rel},
                      {"declared", *declared},
                      {"verdict", actual},
                      {"reason", result.reason},
                      {"ok", ok}});
  }
  if (json) {
    std::cout << nlohmann::json{{"problem", problem.name},
                                {"solutions", report},
                                {"mismatches", mismatches}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << (mismatches == 0 ? "all solutions got their declared verdict\n"
                                  : std::to_string(mismatches) + " solution(s) did not\n");
  }
  return mismatches == 0 ? 0 : kExitRejected;
}

int run_compare(const std::string& problem_dir, const std::string& a_path,
                const std::string& b_path, int trials, bool json, const EnvOptions& options) {
  const kj::problem::Problem problem = options.narrowed(kj::problem::load(problem_dir));
  if (problem.benchmarks.empty())
    throw std::runtime_error("the problem has no benchmarks to compare");
  auto request = options.request(problem, read_source(a_path, options.max_source_bytes),
                                 fs::path(a_path).filename().string(), kj::judge::Mode::compare);
  request.second_source = read_source(b_path, options.max_source_bytes);
  request.second_name = fs::path(b_path).filename().string();
  request.trials = trials;
  const auto result = kj::judge::evaluate(request, options.environment());
  if (json) {
    std::cout << kj::judge::to_json(result).dump(2) << "\n";
    return exit_code_for(result.verdict);
  }
  std::cout << kj::judge::render_text(result, false);
  if (trials > 1 && result.verdict == Verdict::accepted) {
    int a = 0, b = 0, tie = 0;
    for (const auto& c : result.comparisons) {
      using Outcome = kj::bench::PairedComparison::Outcome;
      (c.result.outcome == Outcome::a_faster   ? a
       : c.result.outcome == Outcome::b_faster ? b
                                               : tie)++;
    }
    std::cout << "trials: A faster " << a << ", B faster " << b << ", tie " << tie << "\n";
  }
  return exit_code_for(result.verdict);
}

int run_problem_show(const std::string& problem_dir) {
  const kj::problem::Problem p = kj::problem::load(problem_dir);
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : p.files) files.push_back({{"name", f.name}, {"source", f.source}});
  std::cout << nlohmann::json{{"name", p.name},
                              {"lang", p.lang},
                              {"files", files},
                              {"templates", p.templates},
                              {"tests", p.tests},
                              {"benchmarks", p.benchmarks},
                              {"ranking_by", kj::problem::to_string(p.ranking_by)},
                              {"test_timeout", p.test_timeout.count()},
                              {"benchmark_timeout", p.benchmark_timeout.count()},
                              {"ranked_timeout", p.ranked_timeout.count()},
                              {"warnings", p.warnings}}
                   .dump(2)
            << "\n";
  return 0;
}

// A popcorn-cli id is an API token of the user (the store keeps only its hash): printed once, with
// the line the user puts in ~/.popcorn.yaml.
int run_issue_cli_id(const std::string& db, const std::string& user_name, bool create) {
  auto store = kj::store::open_store(db);
  auto user = store->get_user(user_name);
  if (!user && create) user = store->create_user(user_name, false);
  if (!user) {
    std::cerr << "kj: no user named " << user_name << " (--create makes one)\n";
    return kExitBadInput;
  }
  const auto token = store->create_token(user->id, "popcorn-cli");
  std::cout << "cli_id for " << user->name << " (shown once; it also works as an API token):\n"
            << token.token
            << "\n\nthe user puts this line in ~/.popcorn.yaml:\ncli_id: " << token.token << "\n";
  return 0;
}

// Each KernelBench file (or every .py in a folder, sorted) as a problem directory under out.
int run_import_kernelbench(const std::vector<std::string>& sources, const std::string& out,
                           double tolerance) {
  std::vector<fs::path> files;
  for (const auto& source : sources) {
    if (!fs::is_directory(source)) {
      files.emplace_back(source);
      continue;
    }
    std::vector<fs::path> found;
    for (const auto& entry : fs::directory_iterator(source)) {
      if (entry.is_regular_file() && entry.path().extension() == ".py")
        found.push_back(entry.path());
    }
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  int failed = 0;
  for (const auto& file : files) {
    try {
      const auto imported = kj::problem::import_kernelbench(file, out, tolerance);
      std::cout << imported.name << "\t" << imported.dir.string() << "\n";
    } catch (const kj::problem::ProblemError& e) {
      std::cerr << "kj: skipped " << file.string() << ": " << e.what() << "\n";
      ++failed;
    }
  }
  std::cerr << files.size() - static_cast<std::size_t>(failed) << " of " << files.size()
            << " files imported into " << out << "\n";
  return failed == 0 ? 0 : kExitBadInput;
}

// The bundled problems/: beside the kj executable or one folder above it (build/kj).
std::string bundled_problems_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  for (fs::path dir = exe.parent_path(); !dir.empty(); dir = dir.parent_path()) {
    if (fs::is_directory(dir / "problems")) return (dir / "problems").string();
    if (dir == dir.root_path() ||
        dir.parent_path() == exe.parent_path().parent_path().parent_path())
      break;
  }
  return "";
}

// `kj stats ...` and `kj rejudge`: analysis of the store's submissions (docs/datasets.md).
struct DatasetCommands {
  std::string db = "sqlite:kj.db";
  CLI::App* top = nullptr;
  CLI::App* progression = nullptr;
  CLI::App* summary = nullptr;
  CLI::App* rejudge = nullptr;
  std::string leaderboard, gpu, user, plot, python, harness;
  int n = 10;
  bool json = false;
  TimingCaps caps;  // rejudge's

  explicit DatasetCommands(CLI::App& app) {
    auto* stats = app.add_subcommand("stats", "analysis of the store's submissions");
    stats->require_subcommand(1);
    top = stats->add_subcommand("top", "best score per user on a leaderboard");
    top->add_option("--leaderboard", leaderboard)->required();
    top->add_option("--gpu", gpu, "only this GPU type");
    top->add_option("-n", n, "rows")->capture_default_str();
    progression = stats->add_subcommand("progression", "one user's scores over time");
    progression->add_option("--user", user)->required();
    progression->add_option("--leaderboard", leaderboard)->required();
    progression->add_option("--plot", plot, "also write the progression as an SVG file");
    summary = stats->add_subcommand("summary", "submissions, users and best score per leaderboard");
    for (auto* command : {top, progression, summary}) {
      command->add_option("--db", db, "store URL")->capture_default_str();
      command->add_flag("--json", json);
    }
    rejudge = app.add_subcommand(
        "rejudge", "judge the best submission of the top N users again on this machine's device");
    rejudge->add_option("--db", db, "store URL")->capture_default_str();
    rejudge->add_option("--leaderboard", leaderboard)->required();
    rejudge->add_option("--top", n, "users")->capture_default_str()->check(CLI::PositiveNumber);
    rejudge->add_option("--python", python, "harness interpreter (default $KJ_PYTHON)");
    rejudge->add_option("--harness", harness, "folder holding kj_harness");
    caps.add_to(rejudge);
    rejudge->add_flag("--json", json);
    app.add_subcommand("export", "write kernelbot-data or boostrap parquet (kj export --help)")
        ->allow_extras();
    app.add_subcommand("import", "load kernelbot-data parquet (kj import --help)")->allow_extras();
  }

  std::optional<int> run() {
    if (*top) return print(kj::data::top_contestants(*open(), leaderboard, gpu, n));
    if (*progression) {
      const auto points = kj::data::author_progression(*open(), user, leaderboard);
      if (!plot.empty()) {
        std::ofstream out(plot);
        out << kj::data::progression_svg(points, user + " on " + leaderboard);
        if (!out.flush()) throw std::runtime_error("cannot write " + plot);
      }
      return print(points);
    }
    if (*summary) return print(kj::data::summary(*open()));
    if (*rejudge) return run_rejudge();
    return std::nullopt;
  }

 private:
  std::unique_ptr<kj::store::Store> open() const { return kj::store::open_store(db); }

  template <typename Rows>
  int print(const Rows& rows) const {
    std::cout << (json ? kj::data::to_json(rows).dump(2) + "\n" : kj::data::render_text(rows));
    return 0;
  }

  int run_rejudge() {
    auto store = open();
    const auto gpus = kj::worker::detect_gpus();
    kj::worker::WorkerOptions options;
    options.worker_id = "rejudge:" + std::to_string(getpid());
    options.device = gpus.empty() ? "cpu" : gpus.front().device;
    options.gpu_types = {gpus.empty() ? "cpu" : gpus.front().gpu_type};
    if (!python.empty()) options.python = python;
    if (!harness.empty()) options.harness_dir = harness;
    options.timing = caps.over(options.timing);
    const auto queued = kj::data::queue_rejudge(*store, leaderboard, n, options.gpu_types.front());
    std::cerr << "rejudging " << queued.size() << " submissions on " << options.device << "\n";
    kj::worker::Worker worker(db, options, nullptr);
    while (worker.run_one()) {
    }
    nlohmann::json out = nlohmann::json::array();
    for (auto id : queued) {
      const auto s = store->get_submission(id);
      out.push_back({{"submission_id", id},
                     {"user", s->user_name},
                     {"verdict", s->verdict},
                     {"score", s->score ? nlohmann::json(*s->score) : nlohmann::json()}});
      if (!json) {
        std::cout << "#" << id << "  " << s->user_name << "  " << s->verdict << "  "
                  << (s->score ? kj::bench::format_seconds(*s->score) : "-") << "\n";
      }
    }
    if (json) std::cout << out.dump(2) << "\n";
    return 0;
  }
};

// `kj bootstrap`: PyTorch corpus -> translations -> verified rows (docs/bootstrap.md).
struct BootstrapCommand {
  std::string corpus;
  std::string out_dir;
  std::string url, model, api_key_env, command, prompt_file;
  double temperature = 0;
  int max_tokens = 8192, retries = 5;
  double request_timeout_s = 600, backoff_s = 2;
  kj::bootstrap::BootstrapOptions options;
  int test_timeout_s = 300, benchmark_timeout_s = 600;
  bool no_timing = false, no_screen = false, no_zygote = false, no_compile_cache = false;
  EnvOptions env;

  void add_to(CLI::App* app) {
    app->add_option("CORPUS", corpus,
                    "JSONL rows (pt_code, entrypoint, tests_code) or a "
                    "directory of KernelBench-style .py files")
        ->required();
    app->add_option("--out", out_dir, "output directory (journal.jsonl, rows.jsonl, summary.json)")
        ->required();
    app->add_option("--translator-url", url,
                    "OpenAI-compatible base URL, e.g. http://host:8000/v1");
    app->add_option("--model", model, "model name sent to the endpoint");
    app->add_option("--api-key-env", api_key_env, "environment variable holding the API key");
    app->add_option("--temperature", temperature)->capture_default_str();
    app->add_option("--max-tokens", max_tokens)->capture_default_str();
    app->add_option("--request-timeout", request_timeout_s, "seconds per translator request")
        ->capture_default_str();
    app->add_option("--retries", retries, "more attempts on 429, 5xx and connection errors")
        ->capture_default_str();
    app->add_option("--backoff", backoff_s, "first wait before a retry, seconds (doubles)")
        ->capture_default_str();
    app->add_option("--translator-command", command,
                    "a command translating instead: prompt on stdin, reply on stdout");
    app->add_option("--prompt-template", prompt_file, "prompt template file (docs/bootstrap.md)")
        ->check(CLI::ExistingFile);
    app->add_option("--turns", options.turns, "model turns per row (1 + repairs)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app->add_option("--random-inputs", options.random_inputs,
                    "seeded random variants of the tests' calls")
        ->capture_default_str();
    app->add_option("--concurrency", options.concurrency, "rows in flight")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app->add_option("--test-timeout", test_timeout_s, "seconds per PyTorch run and per test run")
        ->capture_default_str();
    app->add_option("--benchmark-timeout", benchmark_timeout_s, "seconds per timing run")
        ->capture_default_str();
    app->add_flag("--no-timing", no_timing, "do not time accepted translations");
    app->add_flag("--no-screen", no_screen, "skip the static screen on translations");
    app->add_flag("--no-zygote", no_zygote,
                  "start an interpreter for each evaluation instead of forking it from a zygote "
                  "that imported torch once per lane (slower)");
    app->add_flag("--no-compile-cache", no_compile_cache,
                  "compile a translation's kernels anew for its timing instead of reusing its "
                  "test's");
    app->add_option("--device", env.device, "cpu or cuda:N")->capture_default_str();
    app->add_option("--python", env.python, "harness interpreter (default $KJ_PYTHON)");
    app->add_option("--harness", env.harness, "folder holding kj_harness");
    app->add_option("--memory-limit", env.memory_mib, "host memory cap in MiB")
        ->capture_default_str();
    env.caps.add_to(app, "row");
  }

  int run() {
    if (url.empty() == command.empty()) {
      throw std::invalid_argument("give exactly one of --translator-url and --translator-command");
    }
    std::unique_ptr<kj::bootstrap::Translator> translator;
    if (!url.empty()) {
      kj::bootstrap::ChatEndpoint endpoint;
      endpoint.base_url = url;
      endpoint.model = model;
      endpoint.api_key_env = api_key_env;
      endpoint.temperature = temperature;
      endpoint.max_tokens = max_tokens;
      endpoint.timeout = std::chrono::seconds(static_cast<std::int64_t>(request_timeout_s));
      endpoint.retries = retries;
      endpoint.backoff = std::chrono::milliseconds(static_cast<std::int64_t>(backoff_s * 1000));
      translator = kj::bootstrap::make_chat_translator(endpoint);
    } else {
      translator = kj::bootstrap::make_command_translator(
          command, std::chrono::seconds(static_cast<std::int64_t>(request_timeout_s)));
    }
    options.out_dir = out_dir;
    options.prompt_template =
        prompt_file.empty() ? kj::bootstrap::default_prompt_template() : read_text(prompt_file);
    options.timing = !no_timing;
    options.screen = !no_screen;
    options.zygote = !no_zygote;
    options.compile_cache = !no_compile_cache;
    options.timing_settings = env.timing();
    options.test_timeout = std::chrono::seconds(test_timeout_s);
    options.benchmark_timeout = std::chrono::seconds(benchmark_timeout_s);
    options.memory_bytes = env.memory_mib << 20;
    const auto rows = kj::bootstrap::load_corpus(corpus);
    const auto summary =
        kj::bootstrap::run_bootstrap(rows, *translator, env.environment(), options, std::cerr);
    std::cout << summary.render();
    return summary.translator_errors == 0 ? 0 : kExitRejected;
  }
};

}  // namespace

int main(int argc, char** argv) {
  // The parquet commands live in kj-parquet (it links Apache Arrow; kj needs only glibc).
  if (argc >= 2 &&
      (std::string_view(argv[1]) == "export" || std::string_view(argv[1]) == "import")) {
    try {
      return kj::data::run_parquet_tool(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const std::exception& e) {
      std::cerr << "kj: " << e.what() << "\n";
      return kExitInternal;
    }
  }
  CLI::App app{"kj — kerneljudge: judge GPU kernels against PyTorch references"};
  app.require_subcommand(1);

  auto* eval = app.add_subcommand("eval", "judge one submission against a problem");
  std::string problem_dir, submission, mode = "test";
  bool json = false, verbose = false;
  EnvOptions options;
  eval->add_option("PROBLEM_DIR", problem_dir, "problem directory (task.yml)")->required();
  eval->add_option("SUBMISSION", submission, "submission file")
      ->required()
      ->check(CLI::ExistingFile);
  eval->add_option("--mode", mode, "test, benchmark, leaderboard or profile (Nsight Compute)")
      ->capture_default_str();
  std::int64_t secret_seed = -1;
  eval->add_option("--secret-seed", secret_seed,
                   "leaderboard: the secret mixed into every case (default: random)");
  eval->add_flag("--json", json, "print the full result as JSON");
  eval->add_flag("-v,--verbose", verbose, "show stdout, stderr and full tracebacks");
  bool eval_zygote = false;
  eval->add_flag("--zygote", eval_zygote,
                 "fork the harness from a zygote started for this run, the path a worker of "
                 "kj serve judges by (checks that path; slower for one run)");
  bool eval_no_compile_cache = false;
  eval->add_flag("--no-compile-cache", eval_no_compile_cache,
                 "compile everything anew: no Triton kernels or torch extensions kept from an "
                 "earlier run of the same file");
  bool eval_no_daemon = false;
  eval->add_flag("--no-daemon", eval_no_daemon,
                 "judge here even when a kj daemon is running (kj daemon --help)");
  std::string eval_daemon_socket = default_daemon_socket();
  eval->add_option("--daemon-socket", eval_daemon_socket,
                   "the kj daemon to send the call to, if one runs there")
      ->capture_default_str();
  options.add_to(eval);

  auto* daemon = app.add_subcommand(
      "daemon",
      "keep a harness warm for kj eval on this host (a zygote that imported torch once); "
      "runs in the foreground until Ctrl-C or `kj daemon stop`");
  DaemonOptions daemon_options;
  daemon_options.socket = default_daemon_socket();
  daemon->add_option("--socket", daemon_options.socket, "where kj eval finds it")
      ->capture_default_str();
  daemon->add_option("--device", daemon_options.device, "cpu or cuda:N")->capture_default_str();
  daemon->add_option("--python", daemon_options.python,
                     "harness interpreter (default $KJ_PYTHON, else python3)");
  daemon->add_option("--harness", daemon_options.harness, "folder holding kj_harness");
  daemon->add_option("--memory-limit", daemon_options.memory_mib, "host memory cap in MiB")
      ->capture_default_str();
  auto* daemon_stop = daemon->add_subcommand("stop", "stop the daemon after its current call");
  auto* daemon_status_command = daemon->add_subcommand("status", "is one running, and how");
  daemon_stop->fallthrough();  // `kj daemon stop --socket S`
  daemon_status_command->fallthrough();
  daemon->require_subcommand(0, 1);

  auto* compare = app.add_subcommand(
      "compare", "A/B: interleaved rounds of two submissions in one sitting, paired ratios");
  std::string compare_dir, compare_a, compare_b;
  int trials = 1;
  bool compare_json = false;
  EnvOptions compare_options;
  compare->add_option("PROBLEM_DIR", compare_dir)->required();
  compare->add_option("A", compare_a)->required()->check(CLI::ExistingFile);
  compare->add_option("B", compare_b)->required()->check(CLI::ExistingFile);
  compare->add_option("--trials", trials, "independent comparisons per benchmark")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  compare->add_flag("--json", compare_json);
  compare_options.add_to(compare);

  auto* problem = app.add_subcommand("problem", "problem tools");
  problem->require_subcommand(1);
  auto* check =
      problem->add_subcommand("check", "validate a problem and run its declared solutions");
  std::string check_dir;
  bool check_json = false;
  EnvOptions check_options;
  check->add_option("DIR", check_dir)->required();
  check->add_flag("--json", check_json);
  bool check_no_zygote = false;
  check->add_flag("--no-zygote", check_no_zygote,
                  "start an interpreter for each solution instead of forking them all from one "
                  "zygote (slower)");
  check_options.add_to(check);
  auto* show = problem->add_subcommand("show", "print a problem as the judge reads it");
  std::string show_dir;
  show->add_option("DIR", show_dir)->required();
  auto* import_kb = problem->add_subcommand(
      "import-kernelbench", "turn KernelBench files (class Model, get_inputs) into problems");
  std::vector<std::string> import_sources;
  std::string import_out;
  double import_tolerance = 1e-2;
  import_kb->add_option("SOURCES", import_sources, "KernelBench .py files or folders of them")
      ->required()
      ->check(CLI::ExistingPath);
  import_kb->add_option("--out", import_out, "folder to write one problem directory per file")
      ->required();
  import_kb->add_option("--tolerance", import_tolerance, "atol = rtol of the output check")
      ->capture_default_str();

  // kj serve's and kj worker's --reference-keep (WorkerOptions::reference_keep).
  const auto add_reference_keep = [](CLI::App* command, int& seconds) {
    command
        ->add_option("--reference-keep", seconds,
                     "seconds a worker gives the reference times of a benchmark or leaderboard "
                     "run to its next runs of the same problem and settings, which then do not "
                     "time the reference again; 0: every run times it")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
  };
  auto* serve = app.add_subcommand(
      "serve", "run the judge server: REST API, one worker per GPU (or one CPU worker)");
  kj::server::ServeOptions serve_options;
  std::string serve_db = "sqlite:kj.db", serve_python, serve_harness;
  TimingCaps serve_caps;  // over each device's defaults
  bool serve_no_gpu = false;
  serve->add_option("--db", serve_db, "store URL: sqlite:PATH or postgres://USER@HOST/DB")
      ->capture_default_str();
  serve->add_option("--problems", serve_options.problems_dir,
                    "load every problem directory under DIR as a leaderboard (default: the "
                    "bundled problems/)");
  serve->add_option("--host", serve_options.host)->capture_default_str();
  serve->add_option("--port", serve_options.port, "0: any free port")->capture_default_str();
  serve->add_option("--python", serve_python, "harness interpreter (default $KJ_PYTHON)");
  serve->add_option("--harness", serve_harness, "folder holding kj_harness");
  bool serve_no_warm_ahead = false;
  serve->add_flag("--no-gpu", serve_no_gpu, "one CPU worker even when GPUs are present");
  serve->add_flag("--no-warm-ahead", serve_no_warm_ahead,
                  "with --no-zygote: GPU workers start the next job's harness only after a job "
                  "ends, not as it begins (fewer runs per hour)");
  bool serve_no_zygote = false;
  serve->add_flag("--no-zygote", serve_no_zygote,
                  "workers start an interpreter for each job instead of forking it from a "
                  "zygote that imported torch once (slower back to back)");
  bool serve_no_compile_cache = false;
  serve->add_flag("--no-compile-cache", serve_no_compile_cache,
                  "compile every run's kernels anew, instead of keeping what a user's run of a "
                  "file compiled for that user's next run of the same file");
  int serve_reference_keep_s = 600;
  add_reference_keep(serve, serve_reference_keep_s);
  bool serve_no_workers = false;
  serve->add_flag("--no-workers", serve_no_workers,
                  "start no worker: the API only, queued jobs wait (benchmarks, seeding)");
  serve
      ->add_option("--rate-limit", serve_options.api.submissions_per_hour,
                   "submissions per user, leaderboard and hour (admins exempt)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  serve->add_flag("--popcorn-registration", serve_options.api.popcorn_registration,
                  "popcorn-cli's `register` creates a user and its CLI id (open events); "
                  "otherwise issue ids with `kj cli-id`");
  serve->add_option("--max-source-bytes", serve_options.api.max_source_bytes)
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  serve_caps.add_to(serve);

  auto* worker = app.add_subcommand(
      "worker", "judge jobs from a shared store on this host: one worker per GPU (docs/deploy.md)");
  kj::worker::WorkerProcessOptions worker_options;
  std::string worker_python, worker_harness;
  worker->add_option("--db", worker_options.store_url, "store URL: postgres://USER@HOST/DB")
      ->required();
  worker->add_option("--name", worker_options.name, "this host's worker name (default: hostname)");
  worker->add_option("--gpus", worker_options.gpus, "GPU indices to judge on (default: all)")
      ->delimiter(',');
  worker->add_flag("--cpu", worker_options.cpu, "one CPU worker, even when GPUs are present");
  worker->add_option("--gpu-type", worker_options.gpu_type,
                     "job GPU type to take (default: the GPU's name, or cpu)");
  worker->add_option("--python", worker_python, "harness interpreter (default $KJ_PYTHON)");
  worker->add_option("--harness", worker_harness, "folder holding kj_harness");
  bool worker_no_zygote = false;
  worker->add_flag("--no-zygote", worker_no_zygote,
                   "start an interpreter for each job instead of forking it from a zygote that "
                   "imported torch once (slower back to back)");
  bool worker_no_compile_cache = false;
  worker->add_flag("--no-compile-cache", worker_no_compile_cache,
                   "compile every run's kernels anew, instead of keeping what a user's run of a "
                   "file compiled for that user's next run of the same file");
  int worker_reference_keep_s = 600;
  add_reference_keep(worker, worker_reference_keep_s);
  int worker_lease_s = 60;
  worker->add_option("--lease", worker_lease_s, "seconds a claim lasts without a heartbeat")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  auto* workers = app.add_subcommand("workers", "the workers registered in a store");
  std::string workers_db = "sqlite:kj.db";
  workers->add_option("--db", workers_db, "store URL")->capture_default_str();
  auto* drain = workers->add_subcommand(
      "drain", "a worker (or every worker of a host) finishes its current job and takes no more");
  std::string drain_name;
  drain->add_option("NAME", drain_name, "worker name or host name")->required();

  auto* cli_id = app.add_subcommand(
      "cli-id", "issue a popcorn-cli id (X-Popcorn-Cli-Id) for a user of a store (docs/server.md)");
  std::string cli_id_db = "sqlite:kj.db", cli_id_user;
  bool cli_id_create = false;
  cli_id->add_option("USER", cli_id_user, "the kj user the id acts as")->required();
  cli_id->add_option("--db", cli_id_db, "store URL")->capture_default_str();
  cli_id->add_flag("--create", cli_id_create, "create the user when it does not exist");

  auto* submit = app.add_subcommand("submit", "submit a file to a judge server and follow it");
  kj::client::SubmitOptions submit_options;
  std::string server_url, token;
  auto add_connection = [&](CLI::App* command) {
    command->add_option("--server", server_url, "server URL (default $KJ_SERVER, config file)");
    command->add_option("--token", token, "API token (default $KJ_TOKEN, config file)");
  };
  submit->add_option("FILE", submit_options.file)->required()->check(CLI::ExistingFile);
  submit->add_option("--leaderboard", submit_options.leaderboard,
                     "default: the code's '#!POPCORN leaderboard' line");
  submit->add_option("--gpu", submit_options.gpu, "GPU type (default: the code's or the server's)");
  submit->add_option("--mode", submit_options.mode, "test, benchmark, leaderboard or profile")
      ->capture_default_str()
      ->check(CLI::IsMember({"test", "benchmark", "leaderboard", "profile"}));
  submit->add_flag("--json", submit_options.json, "print the final submission as JSON");
  add_connection(submit);

  auto* submissions = app.add_subcommand("submissions", "your submissions on a judge server");
  submissions->require_subcommand(1);
  auto* list = submissions->add_subcommand("list", "your submissions, newest first");
  std::string list_leaderboard;
  bool list_json = false;
  list->add_option("--leaderboard", list_leaderboard);
  list->add_flag("--json", list_json);
  add_connection(list);
  auto* show_submission = submissions->add_subcommand("show", "one submission's result");
  std::int64_t show_id = 0;
  bool show_json = false;
  show_submission->add_option("ID", show_id)->required();
  show_submission->add_flag("--json", show_json);
  add_connection(show_submission);

  auto* delete_submission = submissions->add_subcommand(
      "delete", "delete one of your submissions (its runs leave the rankings)");
  std::int64_t delete_id = 0;
  delete_submission->add_option("ID", delete_id)->required();
  add_connection(delete_submission);

  auto* agent_setup = app.add_subcommand(
      "agent-setup", "write AGENTS.md and a skill telling coding agents how to iterate with kj");
  kj::cli::AgentSetup agent;
  agent_setup->add_option("PROBLEM_DIR", agent.problem_dir, "the problem to work on")
      ->required()
      ->check(CLI::ExistingDirectory);
  agent_setup->add_option("--dir", agent.dir, "where to write them")->capture_default_str();
  agent_setup->add_option("--kj", agent.kj, "how the agent runs kj")->capture_default_str();
  agent_setup->add_option("--leaderboard", agent.leaderboard,
                          "its name on a judge server (default: the problem directory's name)");
  agent_setup->add_flag("--force", agent.force, "replace the files if they exist");

  DatasetCommands datasets(app);
  auto* bootstrap = app.add_subcommand(
      "bootstrap", "PyTorch programs -> model translations -> Triton rows verified by the judge");
  BootstrapCommand bootstrap_command;
  bootstrap_command.add_to(bootstrap);

  CLI11_PARSE(app, argc, argv);
  if (*agent_setup) {
    try {
      for (const auto& path : kj::cli::write_agent_files(agent)) std::cout << path.string() << "\n";
      return 0;
    } catch (const std::exception& e) {
      std::cerr << "kj: " << e.what() << "\n";
      return kExitBadInput;
    }
  }
  if (*submit) {
    return kj::client::submit(kj::client::resolve_connection(server_url, token), submit_options);
  }
  if (*list) {
    return kj::client::list_submissions(kj::client::resolve_connection(server_url, token),
                                        list_leaderboard, list_json);
  }
  if (*show_submission) {
    return kj::client::show_submission(kj::client::resolve_connection(server_url, token), show_id,
                                       show_json);
  }
  if (*delete_submission) {
    return kj::client::delete_submission(kj::client::resolve_connection(server_url, token),
                                         delete_id);
  }
  try {
    if (*cli_id) return run_issue_cli_id(cli_id_db, cli_id_user, cli_id_create);
    if (*eval) {
      EvalCall call;
      call.problem_dir = fs::absolute(problem_dir).string();
      call.submission_path = fs::absolute(submission).string();
      call.source = read_source(submission, options.max_source_bytes);
      call.mode = mode;
      if (secret_seed >= 0) call.secret = secret_seed;
      call.json = json;
      call.verbose = verbose;
      call.zygote = eval_zygote;
      call.compile_cache = !eval_no_compile_cache;
      call.options = options;
      if (!eval_no_daemon) {
        std::string why;
        if (auto code = eval_by_daemon(call, eval_daemon_socket, std::cout, std::cerr, &why))
          return *code;
        if (!why.empty())
          std::cerr << "kj eval: judged here, not by the kj daemon: " << why << "\n";
      }
      return run_eval(call, std::cout, std::cerr);
    }
    if (*daemon) {
      if (*daemon_stop) return stop_daemon(daemon_options.socket, std::cout);
      if (*daemon_status_command) return daemon_status(daemon_options.socket, std::cout);
      return run_daemon(daemon_options);
    }
    if (*compare)
      return run_compare(compare_dir, compare_a, compare_b, trials, compare_json, compare_options);
    if (*check) return run_problem_check(check_dir, check_json, !check_no_zygote, check_options);
    if (*show) return run_problem_show(show_dir);
    if (*import_kb) return run_import_kernelbench(import_sources, import_out, import_tolerance);
    if (*bootstrap) return bootstrap_command.run();
    if (auto rc = datasets.run()) return *rc;
    if (*serve) {
      serve_options.store_url = serve_db;
      if (serve_options.problems_dir.empty()) serve_options.problems_dir = bundled_problems_dir();
      serve_options.use_gpus = !serve_no_gpu;
      serve_options.worker.warm_ahead = !serve_no_warm_ahead;
      serve_options.worker.zygote = !serve_no_zygote;
      serve_options.worker.compile_cache = !serve_no_compile_cache;
      serve_options.worker.reference_keep = std::chrono::seconds(serve_reference_keep_s);
      serve_options.start_workers = !serve_no_workers;
      if (!serve_python.empty()) serve_options.worker.python = serve_python;
      if (!serve_harness.empty()) serve_options.worker.harness_dir = serve_harness;
      serve_options.worker.timing = serve_caps.over(nlohmann::json::object());  // over defaults
      // Fail at start, not on the first job, when the harness cannot be found.
      kj::judge::discover_environment(serve_options.worker.python, serve_options.worker.harness_dir,
                                      "cpu");
      return kj::server::serve(serve_options);
    }
    if (*worker) {
      if (!worker_python.empty()) worker_options.worker.python = worker_python;
      if (!worker_harness.empty()) worker_options.worker.harness_dir = worker_harness;
      worker_options.worker.lease = std::chrono::seconds(worker_lease_s);
      worker_options.worker.zygote = !worker_no_zygote;
      worker_options.worker.compile_cache = !worker_no_compile_cache;
      worker_options.worker.reference_keep = std::chrono::seconds(worker_reference_keep_s);
      kj::judge::discover_environment(worker_options.worker.python,
                                      worker_options.worker.harness_dir, "cpu");
      return kj::worker::run_worker_process(worker_options);
    }
    if (*workers) {
      auto store = kj::store::open_store(workers_db);
      if (*drain) {
        const int n = store->request_drain(drain_name);
        if (n == 0) {
          std::cerr << "kj: no worker or host named " << drain_name << "\n";
          return kExitBadInput;
        }
        std::cout << "draining " << n << " worker(s): each finishes its current job\n";
        return 0;
      }
      std::cout << kj::worker::format_workers(
          store->list_workers(),
          std::chrono::floor<std::chrono::microseconds>(std::chrono::system_clock::now()));
      return 0;
    }
  } catch (const std::exception&) {
    return exit_for_current_exception(std::cerr);
  }
  return 0;
}
