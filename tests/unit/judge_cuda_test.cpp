// lang: cu problems and profile mode on a host without a GPU: the nvcc build path for real (compile
// errors with the compiler's message, the content-keyed cache, the compile time limit). Skipped,
// saying so, where no nvcc is installed.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "judge/detail/cuda.h"
#include "judge/detail/profile.h"
#include "judge/judge.h"
#include "problem/problem.h"

namespace fs = std::filesystem;
using kj::judge::Verdict;

namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class CudaBuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kj::judge::detail::find_nvcc()) GTEST_SKIP() << "nvcc not found: CUDA build tests skipped";
    std::string pattern = (fs::temp_directory_path() / "kj-cuda-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    cache_ = pattern;
    ASSERT_EQ(setenv("KJ_CUDA_CACHE", cache_.c_str(), 1), 0);
    problem_ = kj::problem::load(fs::path(KJ_SOURCE_DIR) / "problems" / "vectoradd_cu");
    environment_.harness_dir = fs::path(KJ_SOURCE_DIR) / "harness";
    environment_.device = "cpu";
    for (const char* dir : {"/usr", "/bin", "/lib", "/lib64", "/etc/alternatives"}) {
      environment_.binds.push_back({dir, "", false, true});
    }
  }
  void TearDown() override {
    unsetenv("KJ_CUDA_CACHE");
    std::error_code ec;
    if (!cache_.empty()) fs::remove_all(cache_, ec);
  }

  kj::judge::EvalResult judge(const std::string& source) {
    kj::judge::EvalRequest request;
    request.problem = &problem_;
    request.submission_source = source;
    request.submission_name = "submission.cu";
    return kj::judge::evaluate(request, environment_);
  }

  std::string solution(const char* name) {
    return read_text(fs::path(KJ_SOURCE_DIR) / "problems" / "vectoradd_cu" / "solutions" / name);
  }

  fs::path cache_;
  kj::problem::Problem problem_;
  kj::judge::Environment environment_;
};

TEST_F(CudaBuildTest, CompileErrorCarriesTheCompilersMessage) {
  const auto result = judge(solution("wrong/syntax_error.cu"));
  EXPECT_EQ(result.verdict, Verdict::compile_error) << result.reason;
  EXPECT_NE(result.reason.find("nvcc failed"), std::string::npos) << result.reason;
  ASSERT_TRUE(result.error.has_value());
  EXPECT_EQ(result.error->stage, "compile");
  // The compiler's own words, with the task's file name rather than a path inside the sandbox.
  EXPECT_NE(result.error->message.find("submission.cu("), std::string::npos)
      << result.error->message;
  EXPECT_NE(result.error->message.find("expected a \";\""), std::string::npos);
  EXPECT_EQ(result.error->message.find("/kj/task"), std::string::npos);
  EXPECT_FALSE(result.compilation.value("ok", true));
  // A failed build is not cached: nothing but an empty cache directory is left.
  EXPECT_TRUE(fs::is_empty(cache_));
}

TEST_F(CudaBuildTest, BuildIsCachedByContent) {
  const std::string source = solution("correct/grid_stride.cu");
  const auto first = judge(source);
  ASSERT_TRUE(first.compilation.value("ok", false)) << first.reason << "\n"
                                                    << first.compilation.dump(2);
  EXPECT_FALSE(first.compilation.value("cached", true));
  // Compiled on a host without a GPU: said plainly, not run.
  EXPECT_NE(first.not_run.find("runs only on a GPU"), std::string::npos) << first.not_run;
  const std::string key = first.compilation.value("key", "");
  EXPECT_TRUE(fs::is_regular_file(cache_ / key / "kj_eval"));
  const auto command = first.compilation["command"].dump();
  EXPECT_NE(command.find("arch=compute_90,code=sm_90"), std::string::npos) << command;

  const auto second = judge(source);
  EXPECT_TRUE(second.compilation.value("cached", false));
  EXPECT_EQ(second.compilation.value("key", ""), key);

  // Any change to what goes into the program is a new build.
  const auto changed = judge(source + "\n// another revision\n");
  EXPECT_TRUE(changed.compilation.value("ok", false));
  EXPECT_FALSE(changed.compilation.value("cached", true));
  EXPECT_NE(changed.compilation.value("key", ""), key);
}

// The reference is timed alone by a program of its own: eval.cu with the problem's files and a
// stand-in that is never called, so nothing of any submission is compiled into it. Built once
// per problem and harness, then taken from the cache.
TEST_F(CudaBuildTest, TheReferencesOwnProgramHoldsNoSubmission) {
  const kj::sandbox::Limits limits = kj::judge::EvalRequest{}.limits;
  const auto first =
      kj::judge::detail::build_reference_program(problem_, environment_, "90", limits);
  ASSERT_TRUE(first.ok) << first.failure << "\n" << first.log;
  EXPECT_FALSE(first.cached);
  EXPECT_TRUE(fs::is_regular_file(first.program));
  const auto again =
      kj::judge::detail::build_reference_program(problem_, environment_, "90", limits);
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.key, first.key);
  // Not the program of a submission, not even one that calls the reference.
  const auto submission = judge(solution("correct/grid_stride.cu"));
  ASSERT_TRUE(submission.compilation.value("ok", false)) << submission.compilation.dump(2);
  EXPECT_NE(submission.compilation.value("key", ""), first.key);
}

TEST_F(CudaBuildTest, CompilationIsTimeLimited) {
  kj::judge::EvalRequest request;
  request.problem = &problem_;
  request.submission_source = solution("correct/float4.cu");
  request.submission_name = "float4.cu";
  request.timeout = std::chrono::milliseconds(300);
  const auto result = kj::judge::evaluate(request, environment_);
  EXPECT_EQ(result.verdict, Verdict::time_limit) << result.reason;
  EXPECT_NE(result.reason.find("compilation"), std::string::npos) << result.reason;
}

TEST(CudaFlags, HopperGetsArchSpecificCodeOnAGpu) {
  const auto gpu = kj::judge::detail::nvcc_flags("90", true);
  const std::string joined = [&] {
    std::string s;
    for (const auto& f : gpu) s += f + " ";
    return s;
  }();
  EXPECT_NE(joined.find("arch=compute_90,code=sm_90 "), std::string::npos) << joined;
  EXPECT_NE(joined.find("arch=compute_90a,code=sm_90a"), std::string::npos) << joined;
  const auto cpu = kj::judge::detail::nvcc_flags("90", false);
  EXPECT_EQ(std::count(cpu.begin(), cpu.end(), std::string("-gencode")), 1);
  const auto ampere = kj::judge::detail::nvcc_flags("80", true);
  EXPECT_EQ(std::count(ampere.begin(), ampere.end(), std::string("-gencode")), 1);
}

}  // namespace

namespace {

// The shape of `ncu --import R --page raw --csv`: names, units, one row per kernel.
TEST(Profile, SummaryOfAnNcuReport) {
  const std::string csv =
      "==PROF== Connected to process 42\n"
      "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\","
      "\"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed\","
      "\"sm__throughput.avg.pct_of_peak_sustained_elapsed\","
      "\"smsp__average_warp_latency_issue_stalled_long_scoreboard_per_warp_active.pct\","
      "\"smsp__average_warp_latency_issue_stalled_barrier_per_warp_active.pct\","
      "\"smsp__average_warp_latency_issue_stalled_wait_per_warp_active.pct\","
      "\"smsp__average_warp_latency_issue_stalled_math_pipe_throttle_per_warp_active.pct\"\n"
      "\"\",\"\",\"usecond\",\"%\",\"%\",\"%\",\"%\",\"%\",\"%\"\n"
      "\"0\",\"add4(const float4 *, const float4 *, float4 *, unsigned long)\",\"1,234.5\","
      "\"91.2\",\"12.5\",\"310.4\",\"0\",\"22.1\",\"3.5\"\n";
  const auto kernels = kj::judge::detail::summarize_ncu_csv(csv);
  ASSERT_EQ(kernels.size(), 1u);
  const auto& k = kernels[0];
  EXPECT_EQ(k["name"], "add4(const float4 *, const float4 *, float4 *, unsigned long)");
  EXPECT_DOUBLE_EQ(k["duration_ns"].get<double>(), 1234500.0);
  EXPECT_DOUBLE_EQ(k["memory_throughput_pct"].get<double>(), 91.2);
  EXPECT_DOUBLE_EQ(k["sm_throughput_pct"].get<double>(), 12.5);
  ASSERT_EQ(k["top_stalls"].size(), 3u);  // the largest three, a zero never among them
  EXPECT_EQ(k["top_stalls"][0]["reason"], "long_scoreboard");
  EXPECT_EQ(k["top_stalls"][1]["reason"], "wait");
  EXPECT_EQ(k["top_stalls"][2]["reason"], "math_pipe_throttle");
  EXPECT_TRUE(kj::judge::detail::summarize_ncu_csv("==ERROR== no kernels were profiled\n").empty());
}

TEST(Profile, FindsThe64BitLibcudaInLdconfigsListing) {
  // What Triton would have looked up with its own `ldconfig -p` child (stuck under ncu).
  const std::string listing =
      "1234 libs found in cache `/etc/ld.so.cache'\n"
      "\tlibcudart.so.12 (libc6,x86-64) => /usr/local/cuda/lib64/libcudart.so.12\n"
      "\tlibcuda.so.1 (libc6) => /usr/lib/i386-linux-gnu/libcuda.so.1\n"
      "\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1\n"
      "\tlibcuda.so (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so\n";
  EXPECT_EQ(kj::judge::detail::libcuda_dir_in(listing), fs::path("/usr/lib/x86_64-linux-gnu"));
  EXPECT_EQ(kj::judge::detail::libcuda_dir_in(
                "\tlibcuda.so.1 (libc6,AArch64) => /usr/lib/aarch64-linux-gnu/libcuda.so.1\r\n"),
            fs::path("/usr/lib/aarch64-linux-gnu"));
  // No driver (a CPU host), or only a 32-bit one: nothing is handed to Triton.
  EXPECT_EQ(
      kj::judge::detail::libcuda_dir_in("\tlibcuda.so.1 (libc6) => /usr/lib32/libcuda.so.1\n"),
      std::nullopt);
  EXPECT_EQ(kj::judge::detail::libcuda_dir_in("0 libs found in cache\n"), std::nullopt);
}

TEST(Profile, SaysPlainlyWhenItCannotProfile) {
  const auto problem = kj::problem::load(fs::path(KJ_SOURCE_DIR) / "problems" / "vectoradd_cu");
  kj::judge::Environment environment;
  environment.harness_dir = fs::path(KJ_SOURCE_DIR) / "harness";
  kj::judge::EvalRequest request;
  request.problem = &problem;
  request.submission_source = "// nothing\n";
  request.mode = kj::judge::Mode::profile;
  const auto on_cpu = kj::judge::evaluate(request, environment);
  EXPECT_EQ(on_cpu.mode, kj::judge::Mode::profile);
  EXPECT_FALSE(on_cpu.profile.value("available", true));
  EXPECT_NE(on_cpu.reason.find("needs a GPU"), std::string::npos) << on_cpu.reason;
  // A GPU machine without Nsight Compute: named, not a silent ordinary run.
  environment.device = "cuda:0";
  ASSERT_EQ(setenv("KJ_NCU", "/nonexistent/ncu", 1), 0);
  const auto no_ncu = kj::judge::evaluate(request, environment);
  unsetenv("KJ_NCU");
  EXPECT_FALSE(no_ncu.profile.value("available", true));
  EXPECT_NE(no_ncu.reason.find("Nsight Compute (ncu) is not installed"), std::string::npos)
      << no_ncu.reason;
  EXPECT_FALSE(no_ncu.outcome.started);
}

// Where compiled kernels are kept between runs: $KJ_CUDA_CACHE, else under $XDG_CACHE_HOME, else
// under ~/.cache (the environment restored afterwards).
TEST(CudaCache, FollowsTheOverrideThenXdgThenHome) {
  const auto saved = [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    return value ? std::optional<std::string>(value) : std::nullopt;
  };
  const auto old_override = saved("KJ_CUDA_CACHE"), old_xdg = saved("XDG_CACHE_HOME"),
             old_home = saved("HOME");
  ASSERT_EQ(setenv("KJ_CUDA_CACHE", "/srv/kj-cache", 1), 0);
  ASSERT_EQ(setenv("XDG_CACHE_HOME", "/xdg", 1), 0);
  ASSERT_EQ(setenv("HOME", "/home/judge", 1), 0);
  EXPECT_EQ(kj::judge::detail::cuda_cache_dir(), fs::path("/srv/kj-cache"));
  unsetenv("KJ_CUDA_CACHE");
  EXPECT_EQ(kj::judge::detail::cuda_cache_dir(), fs::path("/xdg/kj/cuda"));
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(kj::judge::detail::cuda_cache_dir(), fs::path("/home/judge/.cache/kj/cuda"));
  for (const auto& [name, value] :
       {std::pair{"KJ_CUDA_CACHE", old_override}, std::pair{"XDG_CACHE_HOME", old_xdg},
        std::pair{"HOME", old_home}}) {
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
}

// The reference's job reaches eval.cu as lines: each timed case, then the salt its timing drew and
// the submission's sample count for it; a ranked run's secret, so the ranked inputs are the same.
TEST(CudaReferenceJob, EachCaseCarriesItsSaltAndSampleCountAndARankedRunItsSecret) {
  const nlohmann::json job = {{"timing", {{"max_samples", 100}, {"target", "x"}}},
                              {"benchmarks", {{{"size", 64}, {"seed", 3}}, {{"size", 128}}}},
                              {"salts", {11, 281474976710655}},
                              {"samples", {5, 7}},
                              {"ranked", true}};
  EXPECT_EQ(kj::judge::detail::reference_job_lines(job, 99),
            "mode\treference\nresult_fd\t3\ntiming\tmax_samples\t100\nranked\t1\nsecret\t99\n"
            "benchmark\tseed=3\tsize=64\nsalt\t11\nsamples\t5\n"
            "benchmark\tsize=128\nsalt\t281474976710655\nsamples\t7\n");
  nlohmann::json public_run = job;
  public_run["ranked"] = false;
  const std::string lines = kj::judge::detail::reference_job_lines(public_run, 99);
  EXPECT_EQ(lines.find("secret"), std::string::npos) << lines;
  EXPECT_EQ(lines.find("ranked"), std::string::npos) << lines;
}

}  // namespace
