// The reference timed alone after the submission's run (src/judge/reference_alone.cpp): where the
// reference is timed, the job that times it on the submission's inputs, and what its run's
// outcome does to the record: the speedup, or a warning and none, never another verdict.
#include <gtest/gtest.h>

#include <string>

#include "judge/detail/harness_run.h"
#include "judge/detail/reference_alone.h"
#include "judge/judge.h"

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

}  // namespace
}  // namespace kj::judge
