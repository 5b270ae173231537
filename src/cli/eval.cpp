#include "cli/eval.h"

#include <unistd.h>

#include <fstream>
#include <iostream>

#include "datasets/datasets.h"

namespace kj::cli {
namespace fs = std::filesystem;
using kj::judge::Verdict;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string read_source(const fs::path& path, std::size_t limit) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (!ec && size > limit) {
    throw SourceTooLarge(path.string() + " is " + std::to_string(size) +
                         " bytes, over the limit of " + std::to_string(limit) +
                         " bytes on a submission (--max-source-bytes); nothing was run");
  }
  return read_text(path);
}

int exit_code_for(Verdict verdict) {
  if (verdict == Verdict::accepted) return 0;
  return verdict == Verdict::internal_error ? kExitInternal : kExitRejected;
}

int exit_for_current_exception(std::ostream& err) {
  try {
    throw;
  } catch (const SourceTooLarge& e) {
    err << "kj: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const kj::data::DataError& e) {
    err << "kj: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const kj::problem::ProblemError& e) {
    err << "kj: invalid problem: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    err << "kj: " << e.what() << "\n";
    return kExitInternal;
  }
}

nlohmann::json to_json(const EvalCall& call) {
  const EnvOptions& o = call.options;
  return {{"problem_dir", call.problem_dir},
          {"submission_path", call.submission_path},
          {"source", call.source},
          {"mode", call.mode},
          {"secret", call.secret ? nlohmann::json(*call.secret) : nlohmann::json(nullptr)},
          {"json", call.json},
          {"verbose", call.verbose},
          {"zygote", call.zygote},
          {"compile_cache", call.compile_cache},
          {"options",
           {{"device", o.device},
            {"python", o.python},
            {"harness", o.harness},
            {"timeout_s", o.timeout_s},
            {"memory_mib", o.memory_mib},
            {"max_samples", o.caps.max_samples ? nlohmann::json(*o.caps.max_samples) : nullptr},
            {"max_time_s", o.caps.max_time_s ? nlohmann::json(*o.caps.max_time_s) : nullptr},
            {"min_time_s", o.caps.min_time_s ? nlohmann::json(*o.caps.min_time_s) : nullptr},
            {"precision", o.caps.precision ? nlohmann::json(*o.caps.precision) : nullptr},
            {"in_process_timing", o.caps.in_process},
            {"only_case", o.only_case},
            {"no_reference", o.no_reference},
            {"no_screen", o.no_screen},
            {"max_source_bytes", o.max_source_bytes}}}};
}

EvalCall eval_call_from_json(const nlohmann::json& json) {
  EvalCall call;
  call.problem_dir = json.at("problem_dir").get<std::string>();
  call.submission_path = json.at("submission_path").get<std::string>();
  call.source = json.at("source").get<std::string>();
  call.mode = json.at("mode").get<std::string>();
  if (!json.at("secret").is_null()) call.secret = json.at("secret").get<std::int64_t>();
  call.json = json.at("json").get<bool>();
  call.verbose = json.at("verbose").get<bool>();
  call.zygote = json.at("zygote").get<bool>();
  call.compile_cache = json.at("compile_cache").get<bool>();
  const nlohmann::json& o = json.at("options");
  EnvOptions& options = call.options;
  options.device = o.at("device").get<std::string>();
  options.python = o.at("python").get<std::string>();
  options.harness = o.at("harness").get<std::string>();
  options.timeout_s = o.at("timeout_s").get<double>();
  options.memory_mib = o.at("memory_mib").get<std::uint64_t>();
  if (!o.at("max_samples").is_null()) options.caps.max_samples = o.at("max_samples").get<int>();
  if (!o.at("max_time_s").is_null()) options.caps.max_time_s = o.at("max_time_s").get<double>();
  if (o.contains("min_time_s") && !o.at("min_time_s").is_null())
    options.caps.min_time_s = o.at("min_time_s").get<double>();
  if (o.contains("precision") && !o.at("precision").is_null())
    options.caps.precision = o.at("precision").get<double>();
  if (o.contains("in_process_timing") && o.at("in_process_timing").is_boolean())
    options.caps.in_process = o.at("in_process_timing").get<bool>();
  options.only_case = o.at("only_case").get<int>();
  options.no_reference = o.at("no_reference").get<bool>();
  options.no_screen = o.at("no_screen").get<bool>();
  options.max_source_bytes = o.at("max_source_bytes").get<std::size_t>();
  return call;
}

int run_eval(const EvalCall& call, std::ostream& out, std::ostream& err, WarmPath warm) {
  const EnvOptions& options = call.options;
  const auto mode = kj::judge::mode_from_string(call.mode);
  if (!mode || *mode == kj::judge::Mode::compare) {
    err << "kj eval: --mode must be test, benchmark, leaderboard or profile\n";
    return kExitBadInput;
  }
  const kj::problem::Problem problem = options.narrowed(kj::problem::load(call.problem_dir));
  for (const auto& w : problem.warnings) err << "warning: " << w << "\n";
  if (call.source.size() > options.max_source_bytes) {
    throw SourceTooLarge(call.submission_path + " is " + std::to_string(call.source.size()) +
                         " bytes, over the limit of " + std::to_string(options.max_source_bytes) +
                         " bytes on a submission (--max-source-bytes); nothing was run");
  }
  const auto directives = kj::problem::parse_directives(call.source);
  if (directives.leaderboard && *directives.leaderboard != problem.name && !call.json) {
    err << "note: the submission's #!POPCORN leaderboard is '" << *directives.leaderboard
        << "', evaluating against '" << problem.name << "'\n";
  }
  const auto environment = options.environment();
  auto request = options.request(problem, call.source,
                                 fs::path(call.submission_path).filename().string(), *mode);
  request.secret_seed = call.secret;
  // Runs of this exact source by this account on this host reuse what it compiled
  // (docs/sandbox.md, "Compile cache").
  if (call.compile_cache) request.compile_cache_scope = "local user " + std::to_string(::getuid());
  // --zygote: the harness forked from a zygote, as a worker of kj serve judges
  // (docs/sandbox.md); a daemon's zygote is used as it is.
  std::optional<kj::judge::HarnessZygote> forked_from;
  kj::judge::HarnessZygote* zygote = warm.zygote;
  if (zygote == nullptr && call.zygote) {
    forked_from.emplace(environment, request.limits);
    if (!forked_from->wait_ready(std::chrono::seconds(120)))
      err << "warning: no zygote (" << forked_from->failure()
          << "): the harness is started for this run\n";
    zygote = &*forked_from;
  }
  const auto result = kj::judge::evaluate(request, environment, warm.warm, zygote);
  if (call.json) {
    auto json = kj::judge::to_json(result);
    json["timing"] = request.timing;  // the caps this run sampled under
    out << json.dump(2) << "\n";
  } else {
    out << kj::judge::render_text(result, call.verbose);
    if (result.device == "cpu" && !result.benchmarks.empty()) {
      out << "note: CPU times are for development only; timing stopped at "
          << request.timing["max_seconds"].dump() << " s or "
          << request.timing["max_samples"].dump() << " samples per case (--max-time, --max-repeats)"
          << (result.benchmark_set == "cpu_benchmarks"
                  ? ", on the CPU-sized shapes of task.yml's cpu_benchmarks"
                  : "")
          << "; rankings are timed on GPUs\n";
    }
  }
  return exit_code_for(result.verdict);
}

}  // namespace kj::cli
