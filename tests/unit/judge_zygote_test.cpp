// Evaluations forked from a zygote (docs/sandbox.md, "Zygote"): the same verdicts as a harness
// started for the run, nothing of one run seen by the next, and a zygote that died passed over
// for a harness started for the run, with a warning. Needs the harness interpreter ($KJ_PYTHON).
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "judge/judge.h"
#include "problem/problem.h"

namespace {

namespace fs = std::filesystem;
using kj::judge::Verdict;

const fs::path kRoot = KJ_SOURCE_DIR;

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool has_zygote_warning(const kj::judge::EvalResult& result) {
  for (const auto& warning : result.outcome.warnings)
    if (warning.find("zygote") != std::string::npos) return true;
  return false;
}

class ZygoteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    environment_ =
        kj::judge::discover_environment(std::nullopt, (kRoot / "harness").string(), "cpu");
    problem_ = kj::problem::load(kRoot / "problems" / "vectoradd");
  }

  kj::judge::EvalRequest request(const std::string& source) const {
    kj::judge::EvalRequest request;
    request.problem = &problem_;
    request.submission_name = "submission.py";
    request.submission_source = source;
    request.mode = kj::judge::Mode::test;
    return request;
  }

  kj::judge::Environment environment_;
  kj::problem::Problem problem_;
};

TEST_F(ZygoteTest, ForkedRunsGetTheVerdictsOfColdStarts) {
  kj::judge::HarnessZygote zygote(environment_, kj::sandbox::Limits{});
  ASSERT_TRUE(zygote.wait_ready(std::chrono::seconds(120))) << zygote.failure();
  const fs::path solutions = kRoot / "problems" / "vectoradd" / "solutions";
  const std::string runtime_error = "def custom_kernel(data):\n    raise RuntimeError('boom')\n";
  const std::string exits = "import os\n\ndef custom_kernel(data):\n    os._exit(3)\n";
  for (const auto& [name, source] : std::vector<std::pair<std::string, std::string>>{
           {"correct", read(solutions / "correct" / "pytorch.py")},
           {"wrong", read(solutions / "wrong" / "subtract.py")},
           {"syntax", read(solutions / "wrong" / "syntax_error.py")},
           {"raises", runtime_error},
           {"exits", exits}}) {
    SCOPED_TRACE(name);
    const auto cold = kj::judge::evaluate(request(source), environment_);
    const auto forked = kj::judge::evaluate(request(source), environment_, nullptr, &zygote);
    EXPECT_EQ(kj::judge::to_string(forked.verdict), kj::judge::to_string(cold.verdict));
    EXPECT_EQ(forked.tests.size(), cold.tests.size());
    EXPECT_FALSE(has_zygote_warning(forked)) << forked.outcome.warnings.front();
    EXPECT_TRUE(forked.outcome.warnings.empty());
  }
}

TEST_F(ZygoteTest, ARunHitsItsLimitsAsAColdStartDoes) {
  kj::judge::HarnessZygote zygote(environment_, kj::sandbox::Limits{});
  ASSERT_TRUE(zygote.wait_ready(std::chrono::seconds(120))) << zygote.failure();
  auto sleeper = request("import time\n\ndef custom_kernel(data):\n    time.sleep(600)\n");
  sleeper.timeout = std::chrono::seconds(5);
  const auto slept = kj::judge::evaluate(sleeper, environment_, nullptr, &zygote);
  EXPECT_EQ(slept.verdict, Verdict::time_limit) << slept.reason;
  EXPECT_EQ(slept.outcome.limit, kj::sandbox::LimitHit::wall_time);

  auto bomb = request(
      "def custom_kernel(data):\n    block = []\n    while True:\n"
      "        block.append(bytearray(64 << 20))\n");
  bomb.limits.memory_bytes = 1ULL << 30;
  kj::judge::HarnessZygote small(environment_, bomb.limits);
  ASSERT_TRUE(small.wait_ready(std::chrono::seconds(120))) << small.failure();
  const auto bombed = kj::judge::evaluate(bomb, environment_, nullptr, &small);
  EXPECT_EQ(bombed.verdict, Verdict::memory_limit) << bombed.reason;

  const auto unshared = kj::judge::evaluate(
      request("import ctypes\n\ndef custom_kernel(data):\n"
              "    ctypes.CDLL(None).unshare(0x10000000)\n    return data[0] + data[1]\n"),
      environment_, nullptr, &zygote);
  EXPECT_EQ(unshared.verdict, Verdict::security_violation) << unshared.reason;
  EXPECT_FALSE(zygote.failed()) << zygote.failure();
}

TEST_F(ZygoteTest, ADeadZygoteIsPassedOverWithAWarning) {
  kj::judge::HarnessZygote zygote(environment_, kj::sandbox::Limits{});
  ASSERT_TRUE(zygote.wait_ready(std::chrono::seconds(120))) << zygote.failure();
  ASSERT_GT(zygote.pid(), 0);
  ASSERT_EQ(::kill(zygote.pid(), SIGKILL), 0);
  const fs::path correct =
      kRoot / "problems" / "vectoradd" / "solutions" / "correct" / "pytorch.py";
  const auto result = kj::judge::evaluate(request(read(correct)), environment_, nullptr, &zygote);
  EXPECT_EQ(result.verdict, Verdict::accepted) << result.reason;
  ASSERT_TRUE(has_zygote_warning(result));
  EXPECT_NE(result.outcome.warnings.front().find("judged in a harness started for this run"),
            std::string::npos)
      << result.outcome.warnings.front();
  EXPECT_TRUE(zygote.failed());
  // A failed zygote is not asked again: the next run starts its own harness, no warning.
  const auto next = kj::judge::evaluate(request(read(correct)), environment_, nullptr, &zygote);
  EXPECT_EQ(next.verdict, Verdict::accepted) << next.reason;
  EXPECT_FALSE(has_zygote_warning(next));
}

// The one replacement policy (workers, kj daemon, kj bootstrap): a zygote that died is replaced
// and the counter starts again once one serves; zygotes that die one after another before they
// serve make it give up, and from then on runs start their own harness.
TEST_F(ZygoteTest, TheKeeperReplacesADeadZygoteAndGivesUpAfterThreeInARow) {
  std::vector<std::string> said;
  const auto say = [&](const std::string& line) { said.push_back(line); };
  kj::judge::ZygoteKeeper keeper(environment_, kj::sandbox::Limits{}, say);
  kj::judge::HarnessZygote* first = keeper.get();
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(first->wait_ready(std::chrono::seconds(120))) << first->failure();
  ASSERT_EQ(::kill(first->pid(), SIGKILL), 0);
  // The run finds it dead (and is judged in a harness started for it).
  const fs::path correct =
      kRoot / "problems" / "vectoradd" / "solutions" / "correct" / "pytorch.py";
  const auto result = kj::judge::evaluate(request(read(correct)), environment_, nullptr, first);
  EXPECT_EQ(result.verdict, Verdict::accepted) << result.reason;
  ASSERT_TRUE(first->failed());
  kj::judge::HarnessZygote* second = keeper.get();
  ASSERT_NE(second, nullptr);
  ASSERT_TRUE(second->wait_ready(std::chrono::seconds(120))) << second->failure();
  EXPECT_EQ(keeper.get(), second);  // serving: kept, and the count starts again
  EXPECT_FALSE(keeper.gave_up());
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("the zygote failed"), std::string::npos) << said[0];

  // An interpreter that exits at once: every zygote fails before it serves.
  kj::judge::Environment broken = environment_;
  broken.python = "/bin/false";
  said.clear();
  kj::judge::ZygoteKeeper failing(broken, kj::sandbox::Limits{}, say);
  int started = 0;
  while (kj::judge::HarnessZygote* zygote = failing.get()) {
    ++started;
    ASSERT_LE(started, 3);
    EXPECT_FALSE(zygote->wait_ready(std::chrono::seconds(30)));
    EXPECT_TRUE(zygote->failed());
  }
  EXPECT_EQ(started, 3);
  EXPECT_TRUE(failing.gave_up());
  EXPECT_EQ(failing.get(), nullptr);
  ASSERT_EQ(said.size(), 4u);
  EXPECT_NE(said.back().find("3 zygotes failed in a row"), std::string::npos) << said.back();
}

}  // namespace
