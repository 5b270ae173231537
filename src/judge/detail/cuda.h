// `lang: cu` problems: compiling the submission with the CUDA harness (cached by content), and
// running the program in the sandbox. Internal to src/judge.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "judge/judge.h"

namespace kj::judge::detail {

// nvcc: $KJ_NVCC, $CUDA_HOME/bin/nvcc, $CUDA_PATH/bin/nvcc, PATH, /usr/local/cuda/bin/nvcc.
std::optional<std::filesystem::path> find_nvcc();

// The build cache: $KJ_CUDA_CACHE, else $XDG_CACHE_HOME/kj/cuda, else ~/.cache/kj/cuda.
std::filesystem::path cuda_cache_dir();

// Compute capability as digits ("90"): $KJ_CUDA_ARCH, else the GPU's (nvidia-smi), else 90.
std::string cuda_arch_for(const std::string& device);

// -gencode pairs for an arch: sm_XY, and with arch_specific sm_XYa too from Hopper on.
std::vector<std::string> nvcc_flags(const std::string& arch, bool arch_specific);

struct CudaBuild {
  bool ok = false;
  bool cached = false;
  std::string key;                // sha256 of everything that goes into the program
  std::filesystem::path program;  // the built harness+submission, when ok
  std::vector<std::string> command;
  std::string nvcc_version;
  std::string log;              // compiler output, capped
  std::string failure;          // why not ok, one line
  bool infrastructure = false;  // not ok through no fault of the source (nvcc missing, sandbox)
  double seconds = 0;
  sandbox::LimitHit limit = sandbox::LimitHit::none;
};

constexpr std::size_t kCompileLogCap = 16 << 10;
constexpr std::chrono::seconds kCompileWall{180};

// Compiles task_dir's submission.cu with harness_dir/cuda/eval.cu (and the problem's task.h and
// reference.cuh) in the sandbox (memory as `limits`, wall at most compile_wall), or takes the
// program from the cache.
CudaBuild build_cuda_program(const std::filesystem::path& task_dir, const Environment& environment,
                             const std::string& arch, const sandbox::Limits& limits,
                             std::chrono::milliseconds compile_wall);

nlohmann::json to_json(const CudaBuild& build);

// The reference's own program: eval.cu built with the problem's task.h and reference.cuh and a
// stand-in for the submission that is never called (mode reference times the reference alone,
// in a sandbox of its own, after the submission's program ended). Cached by content as any
// build; a failure is in the result (ok false), never thrown.
CudaBuild build_reference_program(const problem::Problem& problem, const Environment& environment,
                                  const std::string& arch, const sandbox::Limits& limits);

// The reference's job (reference_job's, detail/reference_alone.h) as eval.cu's stdin lines: mode
// reference, each timed case with its salt and sample count, and a ranked run's secret.
std::string reference_job_lines(const nlohmann::json& job, std::int64_t secret);

// The judge's side of a `lang: cu` evaluation.
EvalResult evaluate_cuda(const EvalRequest& request, const Environment& environment);

}  // namespace kj::judge::detail
