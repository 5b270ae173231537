// Reading a problem directory in the gpu-mode/reference-kernels format (task.yml, reference.py,
// submission exporting custom_kernel) and the `#!POPCORN` directives of a submission.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/stats.h"

namespace kj::problem {

// A malformed problem: names the file, the line (1-based, 0 when unknown) and the field.
class ProblemError : public std::runtime_error {
 public:
  ProblemError(std::filesystem::path file, int line, std::string field, const std::string& what);
  const std::filesystem::path& file() const { return file_; }
  int line() const { return line_; }
  const std::string& field() const { return field_; }

 private:
  std::filesystem::path file_;
  int line_;
  std::string field_;
};

inline constexpr std::string_view kSubmissionMarker = "@SUBMISSION@";

struct TaskFile {
  std::string name;    // file name in the materialized directory
  std::string source;  // path relative to the problem directory, or @SUBMISSION@
  bool is_submission() const { return source == kSubmissionMarker; }
};

enum class RankingBy { last, mean, geom };
std::string to_string(RankingBy ranking);

struct Problem {
  std::filesystem::path dir;  // absolute
  std::string name;           // directory name
  std::string lang;           // "py" or "cu"
  std::string description;
  std::vector<TaskFile> files;
  nlohmann::json config = nlohmann::json::object();
  std::map<std::string, std::string> templates;  // language -> path relative to dir
  std::vector<nlohmann::ordered_json> tests;     // flat objects of scalar arguments
  std::vector<nlohmann::ordered_json> benchmarks;
  // Per benchmark: optional `bytes` / `flops` keys of its task.yml entry (taken out of the
  // arguments generate_input receives), for % of speed-of-light and the physical floor.
  std::vector<bench::Work> benchmark_work;
  // kerneljudge's extension (`cpu_benchmarks:` in task.yml, the form of `benchmarks`): the
  // benchmark cases a run on a CPU uses instead of the GPU-sized ones, which take minutes there.
  // Empty: a CPU run uses `benchmarks`.
  std::vector<nlohmann::ordered_json> cpu_benchmarks;
  std::vector<bench::Work> cpu_benchmark_work;
  // Which list `benchmarks` holds: "benchmarks", or "cpu_benchmarks" after on_device("cpu").
  std::string benchmark_set = "benchmarks";
  RankingBy ranking_by = RankingBy::last;
  std::chrono::seconds test_timeout{180};
  std::chrono::seconds benchmark_timeout{180};
  std::chrono::seconds ranked_timeout{180};
  std::optional<std::int64_t> seed;
  bool multi_gpu = false;
  // kerneljudge's extension (`kernel_language:` in task.yml): any, triton or cuda. Other than
  // any, a submission must be a kernel in that language, not PyTorch calls or the reference.
  std::string kernel_language = "any";
  // kerneljudge's extension (`ranked_timing:` in task.yml): any or sealed. sealed: on a GPU, a
  // ranked benchmark the harness cannot time by sealed replay fails instead of being timed in
  // the submission's process (docs/sealed-timing.md). Not with lang: cu or multi_gpu, which
  // are never sealed.
  std::string ranked_timing = "any";
  std::vector<std::string> gpus;
  std::vector<std::string> warnings;  // unknown keys and the like: shown, not fatal

  const TaskFile& submission_file() const;
  // The problem as a run on `device` ("cpu" or "cuda:N") sees it: on a CPU its cpu_benchmarks
  // become its benchmarks (when it has them); otherwise unchanged. Applying it twice changes
  // nothing more.
  Problem on_device(std::string_view device) const;
  // GPUs one evaluation takes: the largest world_size of a multi_gpu problem's cases, else 1.
  int gpus_needed() const;
};

// Parses and validates DIR/task.yml. Throws ProblemError.
Problem load(const std::filesystem::path& dir);

// The task's files as the harness reads them, (name, content) in the problem's order, the
// submission's file holding `submission_source`.
std::vector<std::pair<std::string, std::string>> task_files(const Problem& problem,
                                                            std::string_view submission_source);

// Writes every task file into out_dir, the submission's text in place of @SUBMISSION@.
void materialize(const Problem& problem, std::string_view submission_source,
                 const std::filesystem::path& out_dir);

// A KernelBench file (`class Model`, `get_inputs`, `get_init_inputs`) written out as a problem
// directory out_root/<file stem>: the submission defines `class ModelNew`; weights and inputs are
// seeded as KernelBench's eval does and outputs compared with atol = rtol = tolerance.
// Throws ProblemError when the file is not a KernelBench problem.
struct KernelBenchProblem {
  std::string name;
  std::filesystem::path dir;
};
KernelBenchProblem import_kernelbench(const std::filesystem::path& file,
                                      const std::filesystem::path& out_root,
                                      double tolerance = 1e-2);

// `#!POPCORN leaderboard NAME`, `#!POPCORN gpu A B` (or `//!POPCORN` in C++ sources), read as
// popcorn-cli reads them: on any line of the file that starts with the marker, keys in any case,
// the last directive of a key winning.
struct Directives {
  std::optional<std::string> leaderboard;
  std::vector<std::string> gpus;
};
Directives parse_directives(std::string_view source);

// The verdict a solution or corpus file declares on its first line: `# expect: wrong_answer`
// (or `// expect: ...`). Empty when the first line declares nothing.
std::optional<std::string> declared_verdict(std::string_view source);

// "size=1024, seed=7": a case's arguments for people (the judge's reports, the server, kj
// submit).
std::string describe_args(const nlohmann::ordered_json& args);

}  // namespace kj::problem
