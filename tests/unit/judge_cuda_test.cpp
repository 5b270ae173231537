// lang: cu problems on a host without a GPU: the nvcc build path for real (compile errors with
// the compiler's message, the content-keyed cache, the compile time limit). Skipped, saying so,
// where no nvcc is installed.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "judge/detail/cuda.h"
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
