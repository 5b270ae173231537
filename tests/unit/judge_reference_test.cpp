// The reference timed alone after the submission's run (src/judge/reference_alone.cpp): where the
// reference is timed, the job that times it on the submission's inputs, and what its run's
// outcome does to the record: the speedup, or a warning and none, never another verdict.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "judge/detail/harness_run.h"
#include "judge/detail/reference_alone.h"
#include "judge/judge.h"
#include "judge/reference_times.h"

namespace kj::judge {
namespace {

using nlohmann::json;

problem::Problem two_benchmarks() {
  problem::Problem p;
  p.name = "vectoradd";
  p.tests = {nlohmann::ordered_json{{"size", 8}, {"seed", 1}}};
  p.benchmarks = {nlohmann::ordered_json{{"size", 64}, {"seed", 3}},
                  nlohmann::ordered_json{{"size", 128}, {"seed", 4}}};
  p.ranking_by = problem::RankingBy::geom;
  return p;
}

EvalRequest request_for(const problem::Problem& p, Mode mode) {
  EvalRequest r;
  r.problem = &p;
  r.mode = mode;
  return r;
}

// An accepted benchmark run: submission medians 100 and 400 ns (score: geomean 200 ns).
EvalResult accepted_run() {
  EvalResult r;
  r.verdict = Verdict::accepted;
  r.mode = Mode::benchmark;
  r.ranking_by = "geom";
  for (int i = 0; i < 2; ++i) {
    CaseResult c;
    c.index = i;
    c.status = "pass";
    c.samples = {i == 0 ? 100.0 : 400.0};
    c.summary = bench::summarize(c.samples);
    r.benchmarks.push_back(c);
  }
  r.score_ns = 200.0;
  return r;
}

sandbox::Outcome reference_run(const std::string& lines) {
  sandbox::Outcome o;
  o.started = true;
  o.exit_code = 0;
  o.wall = std::chrono::milliseconds(1500);
  o.result_data = lines;
  return o;
}

const char* kBoth = R"({"event":"reference","index":0,"status":"pass","samples_ns":[300,300,300]})"
                    "\n"
                    R"({"event":"reference","index":1,"status":"pass","samples_ns":[1200,1200]})"
                    "\n"
                    R"({"event":"done","passed":true})"
                    "\n";

TEST(ReferenceAlone, TimedAloneForPythonAndCudaProblems) {
  problem::Problem p = two_benchmarks();
  EXPECT_TRUE(detail::reference_timed(request_for(p, Mode::benchmark)));
  EXPECT_TRUE(detail::reference_timed(request_for(p, Mode::leaderboard)));
  EXPECT_FALSE(detail::reference_timed(request_for(p, Mode::test)));
  EXPECT_FALSE(detail::reference_timed(request_for(p, Mode::compare)));
  EvalRequest no_reference = request_for(p, Mode::benchmark);
  no_reference.time_reference = false;
  EXPECT_FALSE(detail::reference_timed(no_reference));

  // lang: cu: by the reference's own program (cuda.cpp), in a sandbox of its own.
  problem::Problem cuda = two_benchmarks();
  cuda.lang = "cu";
  EXPECT_TRUE(detail::reference_timed(request_for(cuda, Mode::leaderboard)));
  EXPECT_FALSE(detail::reference_timed(request_for(cuda, Mode::test)));
}

// Multi-rank problems too (ranks.cpp): the reference's job (one per rank, the same for every
// rank) is the one-rank job.
TEST(ReferenceAlone, TimedAloneForMultiRankProblems) {
  problem::Problem ranks = two_benchmarks();
  ranks.multi_gpu = true;
  for (Mode mode : {Mode::benchmark, Mode::leaderboard}) {
    SCOPED_TRACE(to_string(mode));
    EXPECT_TRUE(detail::reference_timed(request_for(ranks, mode)));
  }
  EXPECT_FALSE(detail::reference_timed(request_for(ranks, Mode::test)));
  EvalRequest no_reference = request_for(ranks, Mode::benchmark);
  no_reference.time_reference = false;
  EXPECT_FALSE(detail::reference_timed(no_reference));
}

// The ranks' reference events, merged over ranks, go in as given; each rank's run is checked
// on its own first (reference_run_failure).
TEST(ReferenceAlone, MergedRankEventsGiveTheSpeedupAndARankThatFailedIsFound) {
  std::string error;
  const auto merged = parse_events(kBoth, &error);
  ASSERT_EQ(error, "");
  EvalResult result = accepted_run();
  detail::merge_reference(result, reference_run(""), merged, "");
  ASSERT_TRUE(result.speedup);
  EXPECT_DOUBLE_EQ(*result.speedup, 3.0);
  // One rank's run as ranks.cpp checks it: its report parsed once, as run_ranks does.
  const auto failure_of = [](const std::string& report) {
    std::string parse_error;
    const auto events = parse_events(report, &parse_error);
    return detail::reference_run_failure(reference_run(report), events, parse_error, 2);
  };
  EXPECT_EQ(failure_of(kBoth), "");
  const std::string peer = failure_of(R"({"event":"error","stage":"run","kind":"peer","error":)"
                                      R"({"type":"PeerFailed","message":"rank 1 failed"}})"
                                      "\n"
                                      R"({"event":"done","passed":false})"
                                      "\n");
  EXPECT_NE(peer.find("PeerFailed: rank 1 failed"), std::string::npos) << peer;
}

TEST(ReferenceAlone, TheJobTimesTheRankedPhaseOnTheSaltsTheSubmissionsRunDrew) {
  problem::Problem p = two_benchmarks();
  const EvalRequest request = request_for(p, Mode::leaderboard);
  std::string error;
  // Public benchmark checks carry no salt; the ranked timings do (and one salt above 2^31).
  const auto events = parse_events(
      R"({"event":"benchmark","index":0,"phase":"public","status":"pass","salt":1})"
      "\n"
      R"({"event":"benchmark","index":0,"phase":"ranked","status":"pass","salt":281474976710000})"
      "\n"
      R"({"event":"benchmark","index":1,"phase":"ranked","status":"pass","salt":77})"
      "\n",
      &error);
  ASSERT_EQ(error, "");
  EvalResult result = accepted_run();
  result.mode = Mode::leaderboard;
  std::string why;
  const auto job = detail::reference_job(request, false, result, events, &why);
  ASSERT_TRUE(job) << why;
  EXPECT_EQ((*job)["mode"], "reference");
  EXPECT_EQ((*job)["salts"], json({281474976710000LL, 77}));
  EXPECT_EQ((*job)["samples"], json({1, 1}));  // as many as the submission got
  EXPECT_EQ((*job)["benchmarks"][1]["size"], 128);
  EXPECT_TRUE((*job)["ranked"]);
  EXPECT_EQ((*job)["tests"], json::array());

  // A timed benchmark without a salt: nothing to time the reference on, and the reason.
  const auto partial = std::span(events).first(2);
  EXPECT_FALSE(detail::reference_job(request, false, result, partial, &why));
  EXPECT_NE(why.find("benchmark 1"), std::string::npos) << why;
}

TEST(ReferenceAlone, ItsSamplesGiveTheSpeedupAndItsWallTime) {
  EvalResult result = accepted_run();
  detail::merge_reference(result, reference_run(kBoth));
  EXPECT_EQ(result.verdict, Verdict::accepted);
  ASSERT_TRUE(result.speedup);
  EXPECT_DOUBLE_EQ(*result.speedup, 3.0);  // geomean(300, 1200) = 600 over 200
  EXPECT_DOUBLE_EQ(result.benchmarks[1].speedup(), 3.0);
  EXPECT_EQ(result.benchmarks[0].reference_samples.size(), 3u);
  EXPECT_DOUBLE_EQ(result.process_times["reference_wall_s"].get<double>(), 1.5);
  EXPECT_TRUE(result.outcome.warnings.empty());
  // Stored as before: the reference's samples under each benchmark in the record.
  const json stored = to_json(result);
  EXPECT_EQ(stored["benchmarks"][1]["reference_samples_ns"], json({1200.0, 1200.0}));
  EXPECT_DOUBLE_EQ(stored["speedup"].get<double>(), 3.0);
}

TEST(ReferenceAlone, AFailedReferenceRunLeavesTheVerdictAndOmitsTheSpeedupWithAWarning) {
  struct Failure {
    const char* name;
    sandbox::Outcome outcome;
    const char* says;
  };
  sandbox::Outcome wall =
      reference_run(R"({"event":"reference","index":0,"status":"pass","samples_ns":[300]})"
                    "\n");
  wall.limit = sandbox::LimitHit::wall_time;
  wall.exit_code.reset();
  wall.signal = 9;
  sandbox::Outcome error = reference_run(
      R"({"event":"reference","index":0,"status":"error","error":{"type":"RuntimeError","message":"boom"}})"
      "\n"
      R"({"event":"done","passed":false})"
      "\n");
  sandbox::Outcome one_of_two =
      reference_run(R"({"event":"reference","index":0,"status":"pass","samples_ns":[300]})"
                    "\n"
                    R"({"event":"done","passed":true})"
                    "\n");
  sandbox::Outcome not_started;
  not_started.setup_error = "sandbox setup: execve: No such file or directory";
  for (const auto& [name, outcome, says] :
       {Failure{"wall", wall, "wall_time limit"}, Failure{"error", error, "RuntimeError: boom"},
        Failure{"one of two", one_of_two, "timed 1 of 2 benchmarks"},
        Failure{"not started", not_started, "could not start"}}) {
    SCOPED_TRACE(name);
    EvalResult result = accepted_run();
    detail::merge_reference(result, outcome);
    EXPECT_EQ(result.verdict, Verdict::accepted);
    EXPECT_FALSE(result.speedup);
    EXPECT_TRUE(result.benchmarks[0].reference_samples.empty());
    EXPECT_EQ(result.benchmarks[0].reference_summary.n, 0u);
    ASSERT_EQ(result.outcome.warnings.size(), 1u);
    EXPECT_NE(result.outcome.warnings[0].find("the reference was not timed"), std::string::npos);
    EXPECT_NE(result.outcome.warnings[0].find(says), std::string::npos)
        << result.outcome.warnings[0];
    EXPECT_NE(render_text(result, false).find("warning: the reference was not timed"),
              std::string::npos);
  }
}

// -- reference times kept between a worker's runs (reference_times.h) -------------------------

using Clock = ReferenceTimes::Clock;

// accepted_run() with its reference timed: medians 300 and 1200 ns, speedup 3.
EvalResult timed_run() {
  EvalResult result = accepted_run();
  detail::merge_reference(result, reference_run(kBoth));
  return result;
}

TEST(ReferenceTimes, KeptTimesGoToTheNextRunWithTheirAge) {
  ReferenceTimes times(std::chrono::seconds(600));
  const auto t0 = Clock::now();
  times.keep("setup", timed_run(), t0);
  const auto kept = times.find("setup", t0 + std::chrono::seconds(42));
  ASSERT_TRUE(kept);
  EXPECT_FALSE(times.find("another setup", t0));
  EvalResult next = accepted_run();  // run without its reference
  ReferenceTimes::give(*kept, t0 + std::chrono::seconds(42), next);
  ASSERT_TRUE(next.speedup);
  EXPECT_DOUBLE_EQ(*next.speedup, 3.0);
  EXPECT_EQ(next.benchmarks[1].reference_samples, std::vector<double>({1200.0, 1200.0}));
  EXPECT_DOUBLE_EQ(next.benchmarks[0].reference_summary.median, 300.0);
  EXPECT_DOUBLE_EQ(next.process_times["reference_kept_age_s"].get<double>(), 42.0);
  EXPECT_FALSE(next.process_times.contains("reference_wall_s"));
  EXPECT_DOUBLE_EQ(to_json(next)["speedup"].get<double>(), 3.0);
}

TEST(ReferenceTimes, TimesAsOldAsKeepForAreDropped) {
  ReferenceTimes times(std::chrono::seconds(600));
  const auto t0 = Clock::now();
  times.keep("setup", timed_run(), t0);
  EXPECT_TRUE(times.find("setup", t0 + std::chrono::seconds(599)));
  EXPECT_FALSE(times.find("setup", t0 + std::chrono::seconds(600)));
  EXPECT_FALSE(times.find("setup", t0));  // dropped, not only hidden
  // Keeping new times drops every other setup's old ones too.
  times.keep("a", timed_run(), t0);
  times.keep("b", timed_run(), t0 + std::chrono::seconds(600));
  EXPECT_FALSE(times.find("a", t0));
  EXPECT_TRUE(times.find("b", t0 + std::chrono::seconds(600)));
  ReferenceTimes none(std::chrono::seconds(0));
  none.keep("setup", timed_run(), t0);
  EXPECT_FALSE(none.find("setup", t0));
}

TEST(ReferenceTimes, OnlyARunWithEveryReferenceTimeOnAHealthyGpuIsKept) {
  const auto t0 = Clock::now();
  EvalResult rejected = timed_run();
  rejected.verdict = Verdict::wrong_answer;
  EvalResult untimed = accepted_run();  // its reference's run failed: no speedup
  EvalResult sick = timed_run();
  sick.gpu_health.ok = false;
  EvalResult partial = timed_run();
  partial.benchmarks[1].reference_samples.clear();
  for (const auto& [name, result] : {std::pair{"rejected", rejected},
                                     {"untimed", untimed},
                                     {"unhealthy GPU", sick},
                                     {"one missing", partial}}) {
    SCOPED_TRACE(name);
    ReferenceTimes times(std::chrono::seconds(600));
    times.keep("setup", result, t0);
    EXPECT_FALSE(times.find("setup", t0));
  }
}

TEST(ReferenceTimes, ARunThatDidNotPassOrDoesNotMatchGetsNone) {
  ReferenceTimes times(std::chrono::seconds(600));
  const auto t0 = Clock::now();
  times.keep("setup", timed_run(), t0);
  const auto kept = times.find("setup", t0);
  ASSERT_TRUE(kept);
  EvalResult failed = accepted_run();
  failed.verdict = Verdict::wrong_answer;
  ReferenceTimes::give(*kept, t0, failed);
  EXPECT_FALSE(failed.speedup);
  EXPECT_TRUE(failed.benchmarks[0].reference_samples.empty());
  EvalResult fewer = accepted_run();
  fewer.benchmarks.pop_back();
  ReferenceTimes::give(*kept, t0, fewer);
  EXPECT_FALSE(fewer.speedup);
  EXPECT_FALSE(fewer.process_times.contains("reference_kept_age_s"));
}

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ReferenceTimes, TheKeyFollowsTheReferenceAndTheSettingsNotTheSubmission) {
  const fs::path dir = fs::temp_directory_path() / ("kj-reftimes-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy(fs::path(KJ_SOURCE_DIR) / "problems" / "vectoradd", dir / "vectoradd",
           fs::copy_options::recursive);
  fs::copy(fs::path(KJ_SOURCE_DIR) / "problems" / "utils.py", dir / "utils.py");
  const problem::Problem p = problem::load(dir / "vectoradd");
  Environment cpu;
  cpu.device = "cpu";
  cpu.python = "/usr/bin/python3";
  cpu.harness_dir = "/opt/kj/harness";
  EvalRequest base = request_for(p, Mode::leaderboard);
  base.submission_source = "def custom_kernel(data): return data[0] + data[1]\n";
  const std::string key = ReferenceTimes::key(base, cpu);
  EvalRequest other_submission = base;
  other_submission.submission_source = "def custom_kernel(data): return sum(data)\n";
  EXPECT_EQ(ReferenceTimes::key(other_submission, cpu), key);
  EvalRequest benchmark = base;
  benchmark.mode = Mode::benchmark;
  EXPECT_NE(ReferenceTimes::key(benchmark, cpu), key);
  EvalRequest capped = base;
  capped.timing = {{"max_seconds", 1.0}};
  EXPECT_NE(ReferenceTimes::key(capped, cpu), key);
  Environment gpu = cpu;
  gpu.device = "cuda:0";
  EXPECT_NE(ReferenceTimes::key(base, gpu), key);
  // The reference edited in place: the same problem object, its file changed on disk.
  std::ofstream(dir / "vectoradd" / "reference.py", std::ios::app) << "\n# edited\n";
  EXPECT_NE(ReferenceTimes::key(base, cpu), key);
  fs::remove_all(dir);
}

// Through the harness on the CPU: the second benchmark run of a problem times no reference and
// gets the first run's times; needs the harness interpreter ($KJ_PYTHON).
TEST(ReferenceTimes, TheSecondRunOfAProblemTimesNoReference) {
  const Environment environment =
      discover_environment(std::nullopt, (fs::path(KJ_SOURCE_DIR) / "harness").string(), "cpu");
  const problem::Problem p = problem::load(fs::path(KJ_SOURCE_DIR) / "problems" / "vectoradd");
  EvalRequest request = request_for(p, Mode::benchmark);
  request.submission_name = "pytorch.py";
  request.submission_source =
      read_text(fs::path(KJ_SOURCE_DIR) / "problems/vectoradd/solutions/correct/pytorch.py");
  request.timing = {{"max_seconds", 0.2}, {"max_samples", 5}};
  ReferenceTimes times(std::chrono::seconds(600));
  const EvalResult first = times.evaluate(request, environment);
  ASSERT_EQ(first.verdict, Verdict::accepted) << first.reason;
  ASSERT_TRUE(first.speedup);
  EXPECT_TRUE(first.process_times.contains("reference_wall_s"));
  const EvalResult second = times.evaluate(request, environment);
  ASSERT_EQ(second.verdict, Verdict::accepted) << second.reason;
  ASSERT_TRUE(second.speedup);
  EXPECT_FALSE(second.process_times.contains("reference_wall_s"));  // no reference job ran
  ASSERT_TRUE(second.process_times.contains("reference_kept_age_s"));
  ASSERT_EQ(second.benchmarks.size(), first.benchmarks.size());
  for (std::size_t i = 0; i < first.benchmarks.size(); ++i)
    EXPECT_EQ(second.benchmarks[i].reference_samples, first.benchmarks[i].reference_samples);
}

}  // namespace
}  // namespace kj::judge
