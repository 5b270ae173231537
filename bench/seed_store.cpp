// Fills a kj store with ranked results for the server benchmarks (bench/server_load.py): USERS
// users and SUBMISSIONS leaderboard-mode submissions spread over them on leaderboard LEADERBOARD
// and GPU type GPU, each claimed and completed with a passed public and a passed secret run, as
// a worker would. The leaderboard must exist (kj serve creates it from problems/).
//
//   kj_seed_store sqlite:PATH LEADERBOARD GPU USERS SUBMISSIONS
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "store/store.h"

namespace {

kj::store::JobOutcome outcome(double score, const std::string& gpu) {
  kj::store::JobOutcome result;
  result.verdict = "accepted";
  result.score = score;
  for (const bool secret : {false, true}) {
    kj::store::NewRun run;
    run.mode = "leaderboard";
    run.runner = gpu;
    run.secret = secret;
    run.score = score;
    run.passed = true;
    run.result_json =
        R"({"verdict":"accepted","speedup":1.25,"benchmarks":[{"median_ns":12345.6,"n":100}]})";
    run.system_json = R"({"gpu":"cpu","torch":"2.11.0"})";
    result.runs.push_back(run);
  }
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s STORE_URL LEADERBOARD GPU USERS SUBMISSIONS\n", argv[0]);
    return 2;
  }
  const std::string gpu = argv[3];
  const int users = std::atoi(argv[4]);
  const int submissions = std::atoi(argv[5]);
  auto store = kj::store::open_store(argv[1]);
  const auto board = store->get_leaderboard(argv[2]);
  if (!board || users <= 0 || submissions < 0) {
    std::fprintf(stderr, "no leaderboard '%s', or a bad count\n", argv[2]);
    return 2;
  }
  std::vector<kj::store::Id> ids;
  for (int i = 0; i < users; ++i) {
    const std::string name = "seed" + std::to_string(i);
    const auto existing = store->get_user(name);
    ids.push_back(existing ? existing->id : store->create_user(name, false).id);
  }
  const std::vector<std::string> gpus = {gpu};
  for (int i = 0; i < submissions; ++i) {
    store->create_submission({ids[static_cast<std::size_t>(i % users)], board->id, "submission.py",
                              "# kernel " + std::to_string(i), gpu, "leaderboard"});
    const auto claimed = store->claim_next_job("seed", gpus, std::chrono::seconds(60));
    if (!claimed ||
        !store->complete(claimed->lease, outcome(1e-6 * (1 + (i * 7919) % 100003), gpu))) {
      std::fprintf(stderr, "submission %d: no job to claim or complete\n", i);
      return 1;
    }
  }
  std::printf("seeded %d users, %d submissions\n", users, submissions);
  return 0;
}
