// Writes the store fixtures that store_test's DatabaseOfAnEarlierVersionIsOpenedAndMigrated opens:
// leaderboards, users with a token, submissions judged, queued and given back, runs, progress
// events and a worker, at fixed times. tests/data/store-v4.db and store-v4.sql were written by
// this program built against the store of schema version 4 (commit 1b9dd45):
//
//   c++ -std=c++20 -Isrc tests/data/make_store_fixture.cpp build/libkj_store.a -lsqlite3
//       -lcrypto -ldl -lpthread -o make_store_fixture
//   ./make_store_fixture sqlite:tests/data/store-v4.db
//   ./make_store_fixture postgres://USER@HOST:PORT/DB
//   pg_dump --no-owner --no-privileges --inserts postgres://USER@HOST:PORT/DB
//       | grep -v '^[\\]' > tests/data/store-v4.sql     (psql's \restrict lines dropped)
//
// It prints the API token it issued (store_test checks that it still authenticates).
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "store/store.h"

using namespace std::chrono_literals;
using namespace kj::store;

namespace {

NewRun run(const std::string& mode, double score, bool secret, Time at) {
  NewRun r;
  r.mode = mode;
  r.runner = "cpu";
  r.score = score;
  r.passed = true;
  r.secret = secret;
  r.result_json = R"({"check":"pass"})";
  r.system_json = R"({"gpu":"cpu"})";
  r.start_time = at;
  r.end_time = at + 2s;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s STORE_URL\n", argv[0]);
    return 2;
  }
  auto clock = std::make_shared<Time>(std::chrono::seconds(1'700'000'000));
  StoreOptions options;
  options.now = [clock] { return *clock; };
  auto store = open_store(argv[1], options);
  const std::vector<std::string> cpu = {"cpu"};

  NewLeaderboard board{"vectoradd",
                       "problems/vectoradd",
                       "lang: py\n",
                       "add two vectors",
                       Time(std::chrono::seconds(1'900'000'000)),
                       {"cpu", "H100"}};
  const Id vectoradd = store->create_leaderboard(board).id;
  board = {"grayscale", "problems/grayscale", "lang: py\n", "to gray", std::nullopt, {"cpu"}};
  board.visibility = Visibility::hidden;
  store->create_leaderboard(board);

  const Id alice = store->create_user("alice", true).id;
  const Id bob = store->create_user("bob", false).id;
  std::printf("alice's token: %s\n", store->create_token(alice, "cli").token.c_str());

  // Judged: bob's is the better score; alice's code holds a NUL byte.
  const std::pair<Id, double> judged[] = {{alice, 2.5e-6}, {bob, 1.25e-6}};
  for (const auto& [user, score] : judged) {
    *clock += 1min;
    store->create_submission({user, vectoradd, "submission.py",
                              user == alice ? std::string("alice\0code", 10) : "bob code", "cpu",
                              "leaderboard"});
    auto claimed = store->claim_next_job("host-a:cpu", cpu, 60s);
    (void)store->append_progress(claimed->lease, R"({"stage":"compile"})");
    JobOutcome outcome{
        "accepted",
        score,
        {run("leaderboard", score, false, *clock), run("leaderboard", score, true, *clock)}};
    (void)store->complete(claimed->lease, outcome);
  }
  // Given back once after a fault, and queued again.
  *clock += 1min;
  store->create_submission({bob, vectoradd, "retry.py", "retry code", "cpu", "test"});
  auto claimed = store->claim_next_job("host-a:cpu", cpu, 60s);
  (void)store->release(claimed->lease, "GPU fell off the bus");
  // Queued, never claimed.
  *clock += 1min;
  store->create_submission({alice, vectoradd, "queued.py", "queued code", "cpu", "benchmark"});
  store->register_worker({"host-a:cpu", "host-a", "cpu", "cpu", 0});
  std::printf("schema version %d\n", store->schema_version());
  return 0;
}
