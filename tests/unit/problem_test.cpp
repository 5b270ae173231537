#include "problem/problem.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using kj::problem::ProblemError;

namespace {

class ProblemDir : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = fs::temp_directory_path() / "kj-problem-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    write("reference.py", "def generate_input(size, seed): pass\n");
    write("task.py", "");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string& name, const std::string& text) {
    fs::create_directories((dir_ / name).parent_path());
    std::ofstream(dir_ / name) << text;
  }

  // Loads and returns the error; fails the test when loading succeeds.
  ProblemError load_error(const std::string& task_yml) {
    write("task.yml", task_yml);
    try {
      kj::problem::load(dir_);
    } catch (const ProblemError& e) {
      return e;
    }
    ADD_FAILURE() << "task.yml was accepted:\n" << task_yml;
    return ProblemError(dir_, 0, "", "");
  }

  fs::path dir_;
};

constexpr const char* kValid = R"(files:
  - {"name": "submission.py", "source": "@SUBMISSION@"}
  - {"name": "reference.py", "source": "reference.py"}
  - {"name": "task.py", "source": "task.py"}
lang: "py"
description: |
  Add two vectors.
templates:
  Python: "reference.py"
tests:
  - {"size": 127, "seed": 4242}
  - {"size": 128, "seed": 5236, "dtype": "float16", "scale": 0.5}
benchmarks:
  - {"size": 1024, "seed": 31232}
ranking_by: "geom"
test_timeout: 60
ranked_timeout: 420
)";

}  // namespace

TEST_F(ProblemDir, ReadsEveryField) {
  write("task.yml", kValid);
  const auto p = kj::problem::load(dir_);
  EXPECT_EQ(p.lang, "py");
  ASSERT_EQ(p.files.size(), 3u);
  EXPECT_TRUE(p.files[0].is_submission());
  EXPECT_EQ(p.submission_file().name, "submission.py");
  ASSERT_EQ(p.tests.size(), 2u);
  EXPECT_EQ(p.tests[0]["size"], 127);
  EXPECT_EQ(p.tests[1]["dtype"], "float16");
  EXPECT_DOUBLE_EQ(p.tests[1]["scale"].get<double>(), 0.5);
  // Argument order is kept: the harness passes them as keyword arguments.
  EXPECT_EQ(p.tests[1].begin().key(), "size");
  EXPECT_EQ(p.benchmarks.size(), 1u);
  EXPECT_EQ(p.ranking_by, kj::problem::RankingBy::geom);
  EXPECT_EQ(p.test_timeout.count(), 60);
  EXPECT_EQ(p.benchmark_timeout.count(), 180);  // default
  EXPECT_EQ(p.ranked_timeout.count(), 420);
  EXPECT_EQ(p.templates.at("Python"), "reference.py");
  EXPECT_EQ(p.description, "Add two vectors.\n");
}

TEST_F(ProblemDir, MaterializesSharedFilesAndTheSubmission) {
  write("../utils-for-test.py", "UTIL = 1\n");
  write("task.yml", std::string(kValid).replace(
                        std::string(kValid).find("  - {\"name\": \"task.py\""), 0,
                        "  - {\"name\": \"utils.py\", \"source\": \"../utils-for-test.py\"}\n"));
  const auto p = kj::problem::load(dir_);
  const fs::path out = dir_ / "out";
  kj::problem::materialize(p, "def custom_kernel(data): return data\n", out);
  std::ifstream sub(out / "submission.py");
  std::string text((std::istreambuf_iterator<char>(sub)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "def custom_kernel(data): return data\n");
  EXPECT_TRUE(fs::exists(out / "utils.py"));
  EXPECT_TRUE(fs::exists(out / "reference.py"));
  fs::remove(dir_.parent_path() / "utils-for-test.py");
}

TEST_F(ProblemDir, YamlSyntaxErrorNamesFileAndLine) {
  const auto e = load_error("files:\n  - {\"name\": \"a.py\"\ntests: [\n");
  EXPECT_NE(std::string(e.what()).find("task.yml:"), std::string::npos) << e.what();
  EXPECT_GT(e.line(), 0);
  EXPECT_NE(std::string(e.what()).find("YAML syntax error"), std::string::npos);
}

TEST_F(ProblemDir, MissingSourceFileNamesFieldAndLine) {
  const auto e = load_error(R"(files:
  - {"name": "submission.py", "source": "@SUBMISSION@"}
  - {"name": "reference.py", "source": "reference.py"}
  - {"name": "utils.py", "source": "../nope.py"}
tests:
  - {"size": 1, "seed": 1}
)");
  EXPECT_EQ(e.field(), "files[2].source");
  EXPECT_EQ(e.line(), 4);
  EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos);
}

TEST_F(ProblemDir, NeedsExactlyOneSubmissionFile) {
  const auto e = load_error(R"(files:
  - {"name": "reference.py", "source": "reference.py"}
tests:
  - {"size": 1, "seed": 1}
)");
  EXPECT_EQ(e.field(), "files");
  EXPECT_NE(std::string(e.what()).find("@SUBMISSION@"), std::string::npos);
}

TEST_F(ProblemDir, TestCaseMustBeMapping) {
  const auto e = load_error(R"(files:
  - {"name": "submission.py", "source": "@SUBMISSION@"}
  - {"name": "reference.py", "source": "reference.py"}
tests:
  - {"size": 1, "seed": 1}
  - 17
)");
  EXPECT_EQ(e.field(), "tests[1]");
  EXPECT_EQ(e.line(), 6);
}

TEST_F(ProblemDir, NestedArgumentIsRejected) {
  const auto e = load_error(R"(files:
  - {"name": "submission.py", "source": "@SUBMISSION@"}
  - {"name": "reference.py", "source": "reference.py"}
tests:
  - {"size": {"a": 1}, "seed": 1}
)");
  EXPECT_EQ(e.field(), "tests[0].size");
}

TEST_F(ProblemDir, BadRankingTimeoutLangAndPathEscape) {
  const std::string files = R"(files:
  - {"name": "submission.py", "source": "@SUBMISSION@"}
  - {"name": "reference.py", "source": "reference.py"}
tests:
  - {"size": 1, "seed": 1}
)";
  EXPECT_EQ(load_error(files + "ranking_by: \"max\"\n").field(), "ranking_by");
  EXPECT_EQ(load_error(files + "test_timeout: soon\n").field(), "test_timeout");
  EXPECT_EQ(load_error(files + "test_timeout: -5\n").field(), "test_timeout");
  EXPECT_EQ(load_error(files + "lang: \"rust\"\n").field(), "lang");
  const auto escape = load_error(R"(files:
  - {"name": "../evil.py", "source": "@SUBMISSION@"}
tests:
  - {"size": 1, "seed": 1}
)");
  EXPECT_EQ(escape.field(), "files[0].name");
}

TEST_F(ProblemDir, MissingTestsAndMissingTaskFile) {
  EXPECT_EQ(load_error(R"(files:
  - {"name": "submission.py", "source": "@SUBMISSION@"}
  - {"name": "reference.py", "source": "reference.py"}
)")
                .field(),
            "tests");
  fs::remove(dir_ / "task.yml");
  EXPECT_THROW(kj::problem::load(dir_), ProblemError);
}

TEST_F(ProblemDir, UnknownKeysAreWarningsNotErrors) {
  write("task.yml", std::string(kValid) + "flavour: spicy\n");
  const auto p = kj::problem::load(dir_);
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_NE(p.warnings[0].find("flavour"), std::string::npos);
}

TEST_F(ProblemDir, MultiGpuNeedsWorldSize) {
  const auto e = load_error(R"(files:
  - {"name": "submission.py", "source": "@SUBMISSION@"}
  - {"name": "reference.py", "source": "reference.py"}
multi_gpu: true
tests:
  - {"size": 1, "seed": 1}
)");
  EXPECT_EQ(e.field(), "tests[0]");
}

TEST(Directives, ReadAnywhereInTheFileAsPopcornCliDoes) {
  // A directive after an import and upper-case keys, as popcorn-cli accepts them; the last wins.
  const auto d = kj::problem::parse_directives(
      "import torch\n#!POPCORN LEADERBOARD vectoradd_v2\n#!POPCORN Gpu H100 B200\nx = 1\n");
  ASSERT_TRUE(d.leaderboard);
  EXPECT_EQ(*d.leaderboard, "vectoradd_v2");
  EXPECT_EQ(d.gpus, (std::vector<std::string>{"H100", "B200"}));
  const auto last = kj::problem::parse_directives(
      "#!POPCORN leaderboard first\r\n#!POPCORN gpu A\r\n#!POPCORN leaderboard second\r\n"
      "#!POPCORN gpus B\r\n");
  EXPECT_EQ(last.leaderboard.value_or(""), "second");
  EXPECT_EQ(last.gpus, (std::vector<std::string>{"B"}));
  const auto cu = kj::problem::parse_directives("#include <x>\n//!POPCORN leaderboard vectorsum\n");
  EXPECT_EQ(cu.leaderboard.value_or(""), "vectorsum");
  // Not directives for popcorn-cli: indented, glued to the marker, a plain comment.
  const auto none = kj::problem::parse_directives(
      "  #!POPCORN leaderboard a\n#!POPCORNleaderboard b\n# POPCORN leaderboard c\n");
  EXPECT_FALSE(none.leaderboard);
}

TEST(DeclaredVerdict, FirstLineOnly) {
  EXPECT_EQ(kj::problem::declared_verdict("# expect: wrong_answer\nx=1\n").value_or(""),
            "wrong_answer");
  EXPECT_EQ(kj::problem::declared_verdict("// expect: compile_error  \n").value_or(""),
            "compile_error");
  EXPECT_FALSE(kj::problem::declared_verdict("import torch\n# expect: accepted\n"));
  EXPECT_FALSE(kj::problem::declared_verdict("x = 'expect: accepted'\n"));
}

TEST_F(ProblemDir, BenchmarkWorkIsTakenOutOfTheArguments) {
  std::string yml = kValid;
  yml.replace(yml.find(R"({"size": 1024, "seed": 31232})"), 29,
              R"({"size": 1024, "seed": 31232, "bytes": 6291456, "flops": 1048576})");
  write("task.yml", yml);
  const auto p = kj::problem::load(dir_);
  ASSERT_EQ(p.benchmark_work.size(), 1u);
  EXPECT_DOUBLE_EQ(p.benchmark_work[0].bytes, 6291456);
  EXPECT_DOUBLE_EQ(p.benchmark_work[0].flops, 1048576);
  EXPECT_FALSE(p.benchmarks[0].contains("bytes"));  // generate_input never sees them
  write("task.yml", std::string(kValid).replace(std::string(kValid).find(R"("seed": 31232})"), 14,
                                                R"("seed": 31232, "bytes": -1})"));
  EXPECT_THROW(kj::problem::load(dir_), ProblemError);
}

TEST_F(ProblemDir, KernelLanguageIsReadAndChecked) {
  write("task.yml", std::string(kValid) + "kernel_language: triton\n");
  const auto p = kj::problem::load(dir_);
  EXPECT_EQ(p.kernel_language, "triton");
  EXPECT_TRUE(p.warnings.empty());
  const auto e = load_error(std::string(kValid) + "kernel_language: rust\n");
  EXPECT_EQ(e.field(), "kernel_language");
  EXPECT_NE(std::string(e.what()).find("any, triton or cuda"), std::string::npos);
}

TEST_F(ProblemDir, RankedTimingIsReadAndChecked) {
  write("task.yml", kValid);
  EXPECT_EQ(kj::problem::load(dir_).ranked_timing, "any");
  write("task.yml", std::string(kValid) + "ranked_timing: sealed\n");
  const auto p = kj::problem::load(dir_);
  EXPECT_EQ(p.ranked_timing, "sealed");
  EXPECT_TRUE(p.warnings.empty());  // a known key
  write("task.yml", std::string(kValid) + "ranked_timing: any\n");
  EXPECT_EQ(kj::problem::load(dir_).ranked_timing, "any");
  const auto e = load_error(std::string(kValid) + "ranked_timing: replay\n");
  EXPECT_EQ(e.field(), "ranked_timing");
  EXPECT_NE(std::string(e.what()).find("any or sealed"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("replay"), std::string::npos) << e.what();
  // Never sealed, so a ranked run could never pass: refused up front.
  std::string cu = std::string(kValid) + "ranked_timing: sealed\n";
  cu.replace(cu.find(R"(lang: "py")"), 10, R"(lang: "cu")");
  const auto on_cu = load_error(cu);
  EXPECT_EQ(on_cu.field(), "ranked_timing");
  EXPECT_NE(std::string(on_cu.what()).find("lang: cu"), std::string::npos) << on_cu.what();
  const auto on_ranks =
      load_error(std::string(kValid) + "multi_gpu: true\nranked_timing: sealed\n");
  EXPECT_EQ(on_ranks.field(), "ranked_timing");
  EXPECT_NE(std::string(on_ranks.what()).find("multi_gpu"), std::string::npos) << on_ranks.what();
}

TEST_F(ProblemDir, CpuBenchmarksAreReadLikeBenchmarks) {
  write("task.yml", std::string(kValid) +
                        "cpu_benchmarks:\n  - {\"size\": 64, \"seed\": 7, \"bytes\": 384}\n"
                        "  - {\"size\": 128, \"seed\": 8}\n");
  const auto p = kj::problem::load(dir_);
  EXPECT_TRUE(p.warnings.empty());
  ASSERT_EQ(p.cpu_benchmarks.size(), 2u);
  EXPECT_EQ(p.cpu_benchmarks[0]["size"], 64);
  EXPECT_FALSE(p.cpu_benchmarks[0].contains("bytes"));
  ASSERT_EQ(p.cpu_benchmark_work.size(), 2u);
  EXPECT_DOUBLE_EQ(p.cpu_benchmark_work[0].bytes, 384);
  ASSERT_EQ(p.benchmarks.size(), 1u);  // the GPU's cases stay as they are
  EXPECT_EQ(p.benchmarks[0]["size"], 1024);
  const auto nested = load_error(std::string(kValid) + "cpu_benchmarks:\n  - 5\n");
  EXPECT_EQ(nested.field(), "cpu_benchmarks[0]");
  std::string without = kValid;
  without.erase(without.find("benchmarks:\n"),
                std::string("benchmarks:\n  - {\"size\": 1024, \"seed\": 31232}\n").size());
  const auto alone = load_error(without + "cpu_benchmarks:\n  - {\"size\": 64, \"seed\": 7}\n");
  EXPECT_EQ(alone.field(), "cpu_benchmarks");
}

// Found by fuzzing task.yml (fuzz/task_yml.cpp): a mapping key that is not a string, at the top
// level (a `? [...]` complex key) or inside config, threw yaml-cpp's TypedBadConversion out of
// load() instead of a ProblemError, which `kj serve` and the API catch.
TEST_F(ProblemDir, AKeyThatIsNotAStringIsAProblemError) {
  auto e = load_error(std::string(kValid) + "? - {\"m\": 32, \"n\": 8192}\n: 1\n");
  EXPECT_EQ(e.line(), 18);
  e = load_error(std::string(kValid) + "config:\n  ? [a, b]\n  : 1\n");
  EXPECT_EQ(e.field(), "config");
}

// task.yml is text: bytes that are not UTF-8 would reach the harness's job as JSON, which cannot
// hold them.
TEST_F(ProblemDir, TaskYmlThatIsNotUtf8IsAProblemError) {
  const auto e = load_error(std::string(kValid) + "# caf\xe9\n");
  EXPECT_EQ(e.line(), 18);
  EXPECT_NE(std::string(e.what()).find("UTF-8"), std::string::npos) << e.what();
  for (const char* bad : {"\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82"}) {
    load_error(std::string(kValid) + "# " + bad + "\n");
  }
  std::string yml = kValid;
  yml.replace(yml.find("Add two vectors."), 16, "naïve — 🚀");
  write("task.yml", yml);
  EXPECT_EQ(kj::problem::load(dir_).description, "naïve — 🚀\n");
}

// libstdc++'s default regex executor recursed once per character a quantifier took: `class`
// followed by 100,000 spaces overflowed the stack of whoever imported the file.
TEST_F(ProblemDir, KernelBenchFileWithAHugeSpaceRunIsRefusedNotACrash) {
  write("model.py", "class" + std::string(100000, ' ') + "Model(nn.Module):\n");
  EXPECT_THROW(kj::problem::import_kernelbench(dir_ / "model.py", dir_ / "out"), ProblemError);
  write("spaced.py", "class" + std::string(100000, ' ') +
                         "Model:\n  pass\ndef get_inputs():\n  return []\n"
                         "def get_init_inputs():\n  return []\n");
  EXPECT_EQ(kj::problem::import_kernelbench(dir_ / "spaced.py", dir_ / "out").name, "spaced");
}

// Found by fuzzing task.yml: a source or template path longer than the system takes made
// std::filesystem throw (File name too long) out of load() instead of a ProblemError.
TEST_F(ProblemDir, APathTooLongForTheSystemIsAProblemError) {
  const std::string long_name = "../" + std::string(5000, 'u') + ".py";
  std::string yml = kValid;
  yml.replace(yml.find("\"task.py\"}"), 9, "\"" + long_name + "\"");
  auto e = load_error(yml);
  EXPECT_EQ(e.field(), "files[2].source");
  yml = kValid;
  yml.replace(yml.find("Python: \"reference.py\""), 22, "Python: \"" + long_name + "\"");
  e = load_error(yml);
  EXPECT_EQ(e.field(), "templates.Python");
}
