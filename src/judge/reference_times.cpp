// Reference times kept between the runs of one worker (reference_times.h).
#include "judge/reference_times.h"

#include <stdexcept>

#include "judge/detail/digest.h"
#include "judge/detail/reference_alone.h"

namespace kj::judge {

std::string ReferenceTimes::key(const EvalRequest& request, const Environment& environment) {
  const problem::Problem& problem = *request.problem;
  nlohmann::json setup = {
      {"mode", to_string(request.mode)},
      {"benchmarks", problem.benchmarks},
      {"cpu_benchmarks", problem.cpu_benchmarks},
      {"ranking_by", problem::to_string(problem.ranking_by)},
      {"timing", request.timing},
      {"device", environment.device},
      {"rank_devices", environment.rank_devices},
      {"python", environment.python.string()},
      {"harness", environment.harness_dir.string()},
      {"files", nlohmann::json::array()},
  };
  for (const auto& [name, content] : problem::task_files(problem, ""))
    setup["files"].push_back({name, detail::sha256_hex(content)});
  return detail::sha256_hex(setup.dump());
}

std::optional<ReferenceTimes::Kept> ReferenceTimes::find(const std::string& key,
                                                         Clock::time_point now) {
  const auto it = kept_.find(key);
  if (it == kept_.end()) return std::nullopt;
  if (now - it->second.taken >= keep_for_) {
    kept_.erase(it);
    return std::nullopt;
  }
  return it->second;
}

void ReferenceTimes::keep(const std::string& key, const EvalResult& result, Clock::time_point now) {
  if (keep_for_.count() <= 0 || result.verdict != Verdict::accepted || !result.speedup ||
      !result.gpu_health.ok || result.benchmarks.empty())
    return;
  // Times past their age go as new ones come: what is kept stays one entry per live setup.
  std::erase_if(kept_, [&](const auto& entry) { return now - entry.second.taken >= keep_for_; });
  Kept kept{.samples = {}, .taken = now};
  for (const auto& c : result.benchmarks) {
    if (c.reference_samples.empty()) return;
    kept.samples.push_back(c.reference_samples);
  }
  kept_[key] = std::move(kept);
}

void ReferenceTimes::give(const Kept& kept, Clock::time_point now, EvalResult& result) {
  if (result.verdict != Verdict::accepted || result.benchmarks.size() != kept.samples.size())
    return;
  for (std::size_t i = 0; i < kept.samples.size(); ++i) {
    result.benchmarks[i].reference_samples = kept.samples[i];
    result.benchmarks[i].reference_summary = bench::summarize(kept.samples[i]);
  }
  try {
    result.speedup = detail::speedup_of(result);
  } catch (const std::invalid_argument& e) {
    detail::omit_speedup(result, std::string("its kept times could not be scored: ") + e.what());
    return;
  }
  if (!result.speedup) return;
  result.process_times["reference_kept_age_s"] =
      std::chrono::duration<double>(now - kept.taken).count();
}

EvalResult ReferenceTimes::evaluate(const EvalRequest& request, const Environment& environment,
                                    WarmHarness* warm, HarnessZygote* zygote) {
  if (!detail::reference_timed(request) || keep_for_.count() <= 0)
    return judge::evaluate(request, environment, warm, zygote);
  std::string setup;
  try {
    setup = key(request, environment);
  } catch (const std::exception&) {
    // A task file that cannot be read: the run itself says what is wrong; nothing is kept.
    return judge::evaluate(request, environment, warm, zygote);
  }
  if (const auto kept = find(setup, Clock::now())) {
    EvalRequest without = request;
    without.time_reference = false;
    EvalResult result = judge::evaluate(without, environment, warm, zygote);
    give(*kept, Clock::now(), result);
    return result;
  }
  EvalResult result = judge::evaluate(request, environment, warm, zygote);
  keep(setup, result, Clock::now());
  return result;
}

}  // namespace kj::judge
