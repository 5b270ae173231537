#include "store/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "store/detail/dialect.h"

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using kj::store::ClaimedJob;
using kj::store::Id;
using kj::store::JobOutcome;
using kj::store::JobState;
using kj::store::NewLeaderboard;
using kj::store::NewRun;
using kj::store::NewSubmission;
using kj::store::open_store;
using kj::store::Store;
using kj::store::StoreError;
using kj::store::StoreOptions;
using kj::store::SubmissionStatus;
using kj::store::Time;
using kj::store::Visibility;

namespace {

const std::vector<std::string> kH200 = {"H200"};
// The tokens tests/data/make_store_fixture.cpp issued to alice in the store-v4 fixtures.
constexpr const char* kSqliteFixtureToken =
    "kj_9da78131867f329ece3fd10144f7565cb32bdee7acd596245053103e5e037868";
constexpr const char* kPostgresFixtureToken =
    "kj_304feb6acac905763bec2cb8f26e5479b3667abae83dd2884384c3368afcfe92";

// Every test runs on SQLite and, when $KJ_TEST_POSTGRES_URL names a PostgreSQL server
// (postgres://USER@HOST:PORT, allowed to create databases), on a fresh database there.
class StoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  bool postgres() const { return GetParam() == "postgres"; }
  void SetUp() override {
    static std::atomic<int> counter{0};
    const std::string unique = std::to_string(getpid()) + "_" + std::to_string(counter++);
    dir_ = fs::temp_directory_path() / ("kj-store-test-" + unique);
    fs::create_directories(dir_);
    path_ = (dir_ / "kj.db").string();
    url_ = "sqlite:" + path_;
    now_ = std::make_shared<Time>(Time(std::chrono::seconds(1'800'000'000)));
    if (postgres()) {
      const char* server = std::getenv("KJ_TEST_POSTGRES_URL");
      if (server == nullptr || *server == '\0') {
        GTEST_SKIP() << "no PostgreSQL server: set KJ_TEST_POSTGRES_URL=postgres://USER@HOST:PORT";
      }
      server_ = server;
      database_ = "kj_store_test_" + unique;
      admin()->script("CREATE DATABASE " + database_);
      url_ = server_ + "/" + database_;
    }
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
    if (!database_.empty())
      admin()->script("DROP DATABASE IF EXISTS " + database_ + " WITH (FORCE)");
  }
  std::unique_ptr<kj::store::detail::SqlConnection> admin() {
    return kj::store::detail::postgres_connection(server_ + "/postgres");
  }
  // Runs SQL on the test's database behind the store's back.
  void exec_raw(const std::string& sql) {
    if (postgres()) {
      kj::store::detail::postgres_connection(url_)->script(sql);
      return;
    }
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(raw);
  }
  std::int64_t query_int(const std::string& sql) {
    if (postgres()) return *kj::store::detail::postgres_connection(url_)->scalar(sql);
    sqlite3* raw = nullptr;
    EXPECT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
    sqlite3_stmt* statement = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(raw, sql.c_str(), -1, &statement, nullptr), SQLITE_OK);
    EXPECT_EQ(sqlite3_step(statement), SQLITE_ROW);
    const std::int64_t value = sqlite3_column_int64(statement, 0);
    sqlite3_finalize(statement);
    sqlite3_close(raw);
    return value;
  }

  StoreOptions options(int max_attempts = 3) {
    StoreOptions options;
    auto now = now_;
    options.now = [now] { return *now; };
    options.max_attempts = max_attempts;
    return options;
  }
  Store& open(int max_attempts = 3) {
    store_ = open_store(url_, options(max_attempts));
    return *store_;
  }
  void advance(std::chrono::microseconds by) { *now_ += by; }
  Time now() const { return *now_; }

  Id leaderboard(const std::string& name = "vectoradd",
                 std::vector<std::string> gpus = {"H200", "cpu"}) {
    NewLeaderboard board;
    board.name = name;
    board.problem_dir = "problems/vectoradd";
    board.task_yaml = "lang: py\n";
    board.description = "add two vectors";
    board.gpu_types = std::move(gpus);
    return store_->create_leaderboard(board).id;
  }
  Id user(const std::string& name) { return store_->create_user(name, false).id; }
  kj::store::Submission submit(Id user_id, Id board_id, const std::string& code,
                               const std::string& mode = "leaderboard",
                               const std::string& gpu = "H200") {
    return store_->create_submission({user_id, board_id, "submission.py", code, gpu, mode});
  }

  // Claims the next job and completes it with one run of `mode`.
  void judge(const std::string& worker, double score, bool passed = true,
             const std::string& mode = "leaderboard", bool secret_failed = false,
             std::vector<std::string> gpus = kH200) {
    auto claimed = store_->claim_next_job(worker, gpus, 60s);
    ASSERT_TRUE(claimed.has_value());
    JobOutcome outcome;
    outcome.verdict = passed ? "accepted" : "wrong_answer";
    outcome.score = score;
    NewRun run;
    run.mode = mode;
    run.runner = gpus.front();
    run.score = score;
    run.passed = passed;
    run.start_time = now();
    run.end_time = now();
    outcome.runs.push_back(run);
    if (secret_failed) {
      run.secret = true;
      run.passed = false;
      outcome.runs.push_back(run);
    }
    ASSERT_TRUE(store_->complete(claimed->lease, outcome));
  }

  std::string file_bytes(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    return bytes.str();
  }

  fs::path dir_;
  std::string path_;
  std::string url_;       // the store under test
  std::string server_;    // PostgreSQL: the server, without a database
  std::string database_;  // PostgreSQL: this test's database
  std::shared_ptr<Time> now_;
  std::unique_ptr<Store> store_;
};

JobOutcome accepted_outcome(double score, Time at) {
  JobOutcome outcome;
  outcome.verdict = "accepted";
  outcome.score = score;
  NewRun run;
  run.mode = "leaderboard";
  run.runner = "NVIDIA H200";
  run.score = score;
  run.passed = true;
  run.result_json = R"({"check":"pass"})";
  run.system_json = R"({"gpu":"NVIDIA H200"})";
  run.start_time = at;
  run.end_time = at + 5s;
  outcome.runs.push_back(run);
  return outcome;
}

// ---- opening and migrations ----------------------------------------------------------------

TEST_P(StoreTest, MigrationsApplyOnceAndDataSurvivesReopen) {
  open();
  EXPECT_EQ(store_->schema_version(), kj::store::latest_schema_version());
  Id board = leaderboard();
  store_.reset();
  for (int i = 0; i < 3; ++i) {
    open();
    EXPECT_EQ(store_->schema_version(), kj::store::latest_schema_version());
    auto found = store_->get_leaderboard("vectoradd");
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(found->id, board);
    store_.reset();
  }
  EXPECT_EQ(query_int("SELECT COUNT(*) FROM schema_migrations"),
            kj::store::latest_schema_version());
  if (postgres()) return;
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* mode = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw, "PRAGMA journal_mode", -1, &mode, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(mode), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(mode, 0)), "wal");
  sqlite3_finalize(mode);
  sqlite3_close(raw);
}

TEST_P(StoreTest, NewerSchemaThanTheBinaryIsRefused) {
  open();
  store_.reset();
  exec_raw(
      "INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'from the future', "
      "0)");
  try {
    open();
    FAIL() << "opened a database with a newer schema";
  } catch (const StoreError& error) {
    EXPECT_EQ(error.operation(), "open");
    EXPECT_NE(std::string(error.what()).find("schema version 999"), std::string::npos)
        << error.what();
  }
}

TEST_P(StoreTest, UrlsSelectTheBackend) {
  if (postgres()) GTEST_SKIP() << "URL parsing is tested once, under sqlite";
  EXPECT_NO_THROW(open_store((dir_ / "plain.db").string(), options()));
  EXPECT_TRUE(fs::exists(dir_ / "plain.db"));
  try {
    // Nothing listens on port 1: a clear error after the backoff, not a crash.
    StoreOptions quick = options();
    quick.busy_timeout = 300ms;
    open_store("postgres://judge@127.0.0.1:1/kj", quick);
    FAIL() << "an unreachable PostgreSQL server was accepted";
  } catch (const StoreError& error) {
    EXPECT_EQ(error.operation(), "open");
    EXPECT_NE(std::string(error.what()).find("PostgreSQL"), std::string::npos) << error.what();
  }
  EXPECT_THROW(open_store("sqlite:"), StoreError);
  EXPECT_THROW(open_store("sqlite:" + (dir_ / "missing-dir" / "kj.db").string()), StoreError);
}

// A published submission as the dataset import hands it to the store.
kj::store::ImportedSubmission imported(Id board, const std::string& user, int n, Time at) {
  kj::store::ImportedSubmission s;
  s.user_name = user;
  s.leaderboard_id = board;
  s.file_name = "submission.py";
  s.code = "def custom_kernel(x):  # " + std::to_string(n) + "\n    return x\n";
  s.gpu_type = "H200";
  s.mode = "leaderboard";
  s.created_at = at + std::chrono::seconds(n);
  s.verdict = "accepted";
  s.score = 1e-5 * n;
  NewRun run;
  run.mode = "leaderboard";
  run.runner = "H200";
  run.score = s.score;
  run.passed = true;
  run.start_time = run.end_time = s.created_at;
  s.runs.push_back(run);
  return s;
}

// A database written by the store of schema version 4 (tests/data/make_store_fixture.cpp): a
// SQLite file, and a pg_dump restored into this test's PostgreSQL database. Opened by this build,
// it is migrated and everything in it reads back; its queue goes on where it stopped.
TEST_P(StoreTest, DatabaseOfAnEarlierVersionIsOpenedAndMigrated) {
  const fs::path data = fs::path(KJ_SOURCE_DIR) / "tests" / "data";
  if (postgres()) {
    kj::store::detail::postgres_connection(url_)->script(file_bytes(data / "store-v4.sql"));
  } else {
    fs::copy_file(data / "store-v4.db", path_);
  }
  open();
  EXPECT_EQ(store_->schema_version(), kj::store::latest_schema_version());
  auto board = store_->get_leaderboard("vectoradd");
  ASSERT_TRUE(board.has_value());
  EXPECT_EQ(board->gpu_types, (std::vector<std::string>{"H100", "cpu"}));
  EXPECT_EQ(board->deadline, Time(std::chrono::seconds(1'900'000'000)));
  EXPECT_EQ(store_->list_leaderboards(false).size(), 1u);
  EXPECT_EQ(store_->list_leaderboards(true).size(), 2u);
  auto alice = store_->user_for_token(postgres() ? kPostgresFixtureToken : kSqliteFixtureToken);
  ASSERT_TRUE(alice.has_value());
  EXPECT_EQ(alice->name, "alice");
  EXPECT_TRUE(alice->is_admin);

  auto ranking = store_->ranking(board->id, "cpu");
  ASSERT_EQ(ranking.size(), 2u);
  EXPECT_EQ(ranking[0].user_name, "bob");
  EXPECT_EQ(ranking[0].score, 1.25e-6);
  EXPECT_EQ(ranking[1].user_name, "alice");
  auto judged = store_->get_submission(ranking[1].submission_id);
  ASSERT_TRUE(judged.has_value());
  EXPECT_EQ(judged->verdict, "accepted");
  EXPECT_EQ(store_->get_code(judged->code_sha256), std::string("alice\0code", 10));
  auto runs = store_->submission_runs(judged->id);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_FALSE(runs[0].secret);
  EXPECT_TRUE(runs[1].secret);
  EXPECT_EQ(runs[0].result_json, R"({"check":"pass"})");
  EXPECT_EQ(runs[0].meta_json, "") << "version 5: judged runs have no published run_meta";
  EXPECT_EQ(store_->progress_since(runs[0].job_id, 0).size(), 1u);
  EXPECT_EQ(store_->count_jobs_by_state()[JobState::queued], 2);
  EXPECT_EQ(store_->list_workers().size(), 1u);

  // The job given back after a fault comes first, on its second attempt; then the other one.
  const std::vector<std::string> cpu = {"cpu"};
  auto retry = store_->claim_next_job("host-b:cpu", cpu, 60s);
  ASSERT_TRUE(retry.has_value());
  EXPECT_EQ(retry->submission.file_name, "retry.py");
  EXPECT_EQ(retry->lease.attempt, 2);
  EXPECT_EQ(retry->code, "retry code");
  EXPECT_TRUE(store_->complete(retry->lease, accepted_outcome(3e-6, now())));
  auto queued = store_->claim_next_job("host-b:cpu", cpu, 60s);
  ASSERT_TRUE(queued.has_value());
  EXPECT_EQ(queued->submission.file_name, "queued.py");
  EXPECT_EQ(queued->lease.attempt, 1);
  // New rows take ids after the old ones.
  EXPECT_GT(store_->create_user("carol", false).id, alice->id);
  auto added = submit(alice->id, board->id, "new code", "test", "cpu");
  EXPECT_GT(added.id, queued->submission.id);

  // Version 5: the leaderboards have no published reference, no row has a source id; an import
  // keeps a free source id as the local one and records one that a fixture row holds.
  EXPECT_EQ(board->reference, "");
  EXPECT_TRUE(store_->source_ids(kj::store::SourceKind::submission).empty());
  auto taken = imported(board->id, "dave", 1, now());
  taken.source_id = added.id;
  auto free = imported(board->id, "dave", 2, now());
  free.source_id = added.id + 100;
  EXPECT_EQ(store_->import_submissions(std::vector{taken, free}), 2);
  EXPECT_EQ(store_->get_submission(added.id + 100)->user_name, "dave");
  const auto sources = store_->source_ids(kj::store::SourceKind::submission);
  ASSERT_EQ(sources.size(), 1u);
  EXPECT_EQ(sources.begin()->second, std::to_string(added.id));
  EXPECT_EQ(store_->get_submission(sources.begin()->first)->user_name, "dave");
}

// ---- leaderboards ---------------------------------------------------------------------------

TEST_P(StoreTest, LeaderboardsKeepTheirSnapshotAndHideHiddenOnes) {
  open();
  NewLeaderboard board;
  board.name = "softmax";
  board.problem_dir = "problems/softmax";
  board.task_yaml = "lang: py\n";
  board.description = "rows";
  board.deadline = now() + 24h;
  board.gpu_types = {"H200", "cpu", "H200"};
  auto created = store_->create_leaderboard(board);
  EXPECT_EQ(created.gpu_types, (std::vector<std::string>{"H200", "cpu"}));
  EXPECT_EQ(created.deadline, now() + 24h);
  EXPECT_EQ(created.visibility, Visibility::listed);

  board.name = "secret-problem";
  board.visibility = Visibility::hidden;
  board.deadline.reset();
  store_->create_leaderboard(board);
  EXPECT_EQ(store_->list_leaderboards(false).size(), 1u);
  EXPECT_EQ(store_->list_leaderboards(true).size(), 2u);

  store_->set_leaderboard_visibility("secret-problem", Visibility::listed);
  store_->set_leaderboard_deadline("softmax", std::nullopt);
  EXPECT_EQ(store_->list_leaderboards(false).size(), 2u);
  EXPECT_FALSE(store_->get_leaderboard("softmax")->deadline.has_value());

  advance(1h);
  auto synced = store_->sync_leaderboard("softmax", "lang: py\ntests: []\n", "rows, v2");
  EXPECT_EQ(synced.task_yaml, "lang: py\ntests: []\n");
  EXPECT_EQ(synced.description, "rows, v2");
  EXPECT_EQ(synced.synced_at, now());
  EXPECT_THROW(store_->sync_leaderboard("nope", "", ""), StoreError);
  EXPECT_THROW(store_->set_leaderboard_deadline("nope", now()), StoreError);
}

TEST_P(StoreTest, SecretSeedsDifferAndAreStable) {
  open();
  leaderboard("a");
  leaderboard("b");
  auto a = store_->leaderboard_secret_seed("a");
  EXPECT_EQ(a, store_->leaderboard_secret_seed("a"));
  EXPECT_NE(a, store_->leaderboard_secret_seed("b"));
  EXPECT_GE(a, 0);
  EXPECT_THROW(store_->leaderboard_secret_seed("c"), StoreError);
}

TEST_P(StoreTest, DuplicateLeaderboardNameIsRefusedAndChangesNothing) {
  open();
  leaderboard("vectoradd", {"H200"});
  NewLeaderboard again;
  again.name = "vectoradd";
  again.problem_dir = "elsewhere";
  again.task_yaml = "other";
  again.gpu_types = {"B200"};
  try {
    store_->create_leaderboard(again);
    FAIL() << "duplicate accepted";
  } catch (const StoreError& error) {
    EXPECT_EQ(error.operation(), "create_leaderboard");
    EXPECT_NE(std::string(error.what()).find("already exists"), std::string::npos);
  }
  auto boards = store_->list_leaderboards(true);
  ASSERT_EQ(boards.size(), 1u);
  EXPECT_EQ(boards[0].problem_dir, "problems/vectoradd");
  EXPECT_EQ(boards[0].gpu_types, (std::vector<std::string>{"H200"}));
}

// ---- users and tokens -----------------------------------------------------------------------

TEST_P(StoreTest, TokensAreStoredHashedAndRevocable) {
  open();
  Id alice = user("alice");
  auto issued = store_->create_token(alice, "laptop");
  EXPECT_EQ(issued.token.size(), 3u + 64u);
  EXPECT_NE(store_->create_token(alice, "ci").token, issued.token);

  auto found = store_->user_for_token(issued.token);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->name, "alice");
  std::string wrong = issued.token;
  wrong.back() = wrong.back() == '0' ? '1' : '0';
  EXPECT_FALSE(store_->user_for_token(wrong).has_value());
  EXPECT_FALSE(store_->user_for_token("").has_value());

  // The clear token is nowhere in the database.
  if (!postgres()) {
    std::string bytes = file_bytes(path_) + file_bytes(path_ + "-wal");
    EXPECT_EQ(bytes.find(issued.token), std::string::npos);
    EXPECT_EQ(bytes.find(issued.token.substr(3)), std::string::npos);
  } else {
    EXPECT_EQ(query_int("SELECT COUNT(*) FROM api_tokens WHERE position('" +
                        issued.token.substr(3) + "' IN encode(token_sha256, 'hex')) > 0 OR " +
                        "label LIKE '%" + issued.token.substr(3) + "%'"),
              0);
  }

  EXPECT_TRUE(store_->revoke_token(issued.token_id));
  EXPECT_FALSE(store_->revoke_token(issued.token_id));
  EXPECT_FALSE(store_->user_for_token(issued.token).has_value());
  EXPECT_THROW(store_->create_token(12345, "nobody"), StoreError);
}

TEST_P(StoreTest, DuplicateUserNameIsRefused) {
  open();
  user("alice");
  EXPECT_THROW(store_->create_user("alice", true), StoreError);
  EXPECT_FALSE(store_->get_user("alice")->is_admin);
  EXPECT_FALSE(store_->get_user("bob").has_value());
}

// ---- code and submissions -------------------------------------------------------------------

TEST_P(StoreTest, IdenticalCodeIsStoredOnce) {
  open();
  Id board = leaderboard();
  Id alice = user("alice");
  Id bob = user("bob");
  auto first = submit(alice, board, "def custom_kernel(x): return x\n");
  auto second = submit(bob, board, "def custom_kernel(x): return x\n");
  auto third = submit(alice, board, "def custom_kernel(x): return x + 0\n");
  EXPECT_EQ(first.code_id, second.code_id);
  EXPECT_EQ(first.code_sha256, second.code_sha256);
  EXPECT_NE(first.code_id, third.code_id);
  EXPECT_EQ(store_->put_code("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::string with_nul("a\0b\xff", 4);
  auto hash = store_->put_code(with_nul);
  EXPECT_EQ(store_->get_code(hash), with_nul);
  EXPECT_EQ(store_->get_code(first.code_sha256), "def custom_kernel(x): return x\n");
}

TEST_P(StoreTest, SubmissionForUnknownUserOrLeaderboardChangesNothing) {
  open();
  Id board = leaderboard();
  Id alice = user("alice");
  const std::string code = "abc";
  const std::string code_sha256 =
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  try {
    store_->create_submission({alice + 100, board, "s.py", code, "H200", "test"});
    FAIL() << "unknown user accepted";
  } catch (const StoreError& error) {
    EXPECT_EQ(error.operation(), "create_submission");
    EXPECT_NE(std::string(error.what()).find("no user with id"), std::string::npos);
  }
  EXPECT_THROW(store_->create_submission({alice, board + 100, "s.py", code, "H200", "test"}),
               StoreError);
  EXPECT_THROW(store_->create_submission({alice, board, "", code, "H200", "test"}), StoreError);
  EXPECT_TRUE(store_->user_submissions(alice, 0, 100).empty());
  EXPECT_EQ(store_->count_queued_jobs("H200"), 0);
  // The code of a refused submission was not kept either.
  EXPECT_FALSE(store_->get_code(code_sha256).has_value());
  EXPECT_EQ(store_->put_code(code), code_sha256);
  EXPECT_EQ(store_->get_code(code_sha256), code);
}

TEST_P(StoreTest, UserSubmissionsNewestFirst) {
  open();
  Id vectoradd = leaderboard("vectoradd");
  Id softmax = leaderboard("softmax");
  Id alice = user("alice");
  auto a = submit(alice, vectoradd, "a");
  advance(1s);
  auto b = submit(alice, softmax, "b");
  advance(1s);
  auto c = submit(alice, vectoradd, "c", "test");
  auto all = store_->user_submissions(alice, 0, 10);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].id, c.id);
  EXPECT_EQ(all[2].id, a.id);
  EXPECT_EQ(all[1].leaderboard_name, "softmax");
  EXPECT_EQ(store_->user_submissions(alice, vectoradd, 10).size(), 2u);
  EXPECT_EQ(store_->user_submissions(alice, 0, 1).size(), 1u);
  EXPECT_EQ(b.status, SubmissionStatus::queued);
}

// ---- the queue ------------------------------------------------------------------------------

TEST_P(StoreTest, ClaimGivesTheOldestJobForTheWorkersGpus) {
  open();
  Id board = leaderboard();
  Id alice = user("alice");
  auto on_cpu = submit(alice, board, "1", "test", "cpu");
  auto on_h200 = submit(alice, board, "2", "test", "H200");
  EXPECT_EQ(store_->count_queued_jobs("cpu"), 1);
  EXPECT_FALSE(store_->claim_next_job("w", std::vector<std::string>{"B200"}, 60s).has_value());
  auto claimed = store_->claim_next_job("w", kH200, 60s);
  ASSERT_TRUE(claimed.has_value());
  EXPECT_EQ(claimed->submission.id, on_h200.id);
  EXPECT_EQ(claimed->code, "2");
  EXPECT_EQ(claimed->problem_dir, "problems/vectoradd");
  EXPECT_EQ(claimed->secret_seed, store_->leaderboard_secret_seed("vectoradd"));
  EXPECT_EQ(claimed->job.state, JobState::running);
  EXPECT_EQ(claimed->job.lease_expires_at, now() + 60s);
  EXPECT_EQ(store_->get_submission(on_h200.id)->status, SubmissionStatus::running);
  auto both = store_->claim_next_job("w", std::vector<std::string>{"H200", "cpu"}, 60s);
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(both->submission.id, on_cpu.id);
  EXPECT_FALSE(store_->claim_next_job("w", std::vector<std::string>{"H200", "cpu"}, 60s));
}

// A job of a multi-GPU problem (gpus_needed = world_size) goes only to a claim that brings that
// many GPUs; a claim with fewer takes the next job it can run instead; a re-queued job keeps
// its need.
TEST_P(StoreTest, MultiGpuJobIsClaimedOnlyWithEnoughGpus) {
  open();
  Id board = leaderboard();
  Id alice = user("alice");
  kj::store::NewSubmission two_ranks{alice, board, "submission.py", "ranks", "H200", "test"};
  two_ranks.gpus_needed = 2;
  auto multi = store_->create_submission(two_ranks);
  auto single = submit(alice, board, "one", "test");
  EXPECT_EQ(store_->count_queued_jobs("H200"), 2);
  auto first = store_->claim_next_job("host-a:cuda:0", kH200, 60s, 1);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->submission.id, single.id);  // the older two-GPU job is passed over
  EXPECT_FALSE(store_->claim_next_job("host-a:cuda:1", kH200, 60s, 1).has_value());
  EXPECT_FALSE(store_->claim_next_job("host-a:cuda:1", kH200, 60s).has_value());  // one GPU
  auto second = store_->claim_next_job("host-b:cuda:0", kH200, 60s, 2);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->submission.id, multi.id);
  EXPECT_EQ(second->job.state, JobState::running);
  store_->enqueue(multi.id, "H200");  // a rejudge
  EXPECT_FALSE(store_->claim_next_job("host-a:cuda:1", kH200, 60s, 1).has_value());
  auto again = store_->claim_next_job("host-c:cuda:0", kH200, 60s, 8);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->submission.id, multi.id);
  EXPECT_EQ(query_int("SELECT MIN(gpus_needed) FROM jobs WHERE submission_id = " +
                      std::to_string(multi.id)),
            2);
}

TEST_P(StoreTest, CompleteRecordsRunsAndVerdictOnce) {
  open();
  Id board = leaderboard();
  auto submission = submit(user("alice"), board, "code");
  auto claimed = store_->claim_next_job("worker-1", kH200, 60s);
  ASSERT_TRUE(claimed.has_value());
  ASSERT_TRUE(store_->complete(claimed->lease, accepted_outcome(1234.5, now())));
  EXPECT_FALSE(store_->complete(claimed->lease, accepted_outcome(1.0, now())));
  auto done = store_->get_submission(submission.id);
  EXPECT_EQ(done->status, SubmissionStatus::done);
  EXPECT_EQ(done->verdict, "accepted");
  EXPECT_EQ(done->score, 1234.5);
  auto runs = store_->submission_runs(submission.id);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].score, 1234.5);
  EXPECT_EQ(runs[0].system_json, R"({"gpu":"NVIDIA H200"})");
  EXPECT_EQ(runs[0].end_time - runs[0].start_time, 5s);
  EXPECT_EQ(store_->get_job(claimed->job.id)->state, JobState::done);
}

// Profile mode's report: kept byte for byte with its run, listed by size, gone with the
// submission; an invalid run rolls its files back with it.
TEST_P(StoreTest, RunFilesAreKeptWithTheRunAndGoWithTheSubmission) {
  open();
  Id board = leaderboard();
  auto submission = submit(user("alice"), board, "code");
  auto claimed = store_->claim_next_job("worker-1", kH200, 60s);
  ASSERT_TRUE(claimed.has_value());
  auto outcome = accepted_outcome(1.0, now());
  // 18 bytes with two NULs (the literal's own terminator not among them: a length of 20 read past
  // it, which ASan reported).
  constexpr char kReport[] = "NCU\0report\xff\x00 bytes";
  const std::string report(kReport, sizeof kReport - 1);
  outcome.runs[0].files = {{"profile.ncu-rep", report}};
  auto broken = outcome;
  broken.runs.push_back(broken.runs[0]);
  broken.runs[1].result_json = "{not json";
  EXPECT_THROW((void)store_->complete(claimed->lease, broken), StoreError);
  EXPECT_EQ(query_int("SELECT COUNT(*) FROM run_files"), 0);
  ASSERT_TRUE(store_->complete(claimed->lease, outcome));
  const auto runs = store_->submission_runs(submission.id);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(runs[0].files.empty());  // listed and read on their own
  const auto files = store_->run_files(submission.id);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].run_id, runs[0].id);
  EXPECT_EQ(files[0].name, "profile.ncu-rep");
  EXPECT_EQ(files[0].bytes, 18);
  EXPECT_EQ(store_->run_file(runs[0].id, "profile.ncu-rep"), report);
  EXPECT_EQ(store_->run_file(runs[0].id, "other"), std::nullopt);
  EXPECT_TRUE(store_->delete_submission(submission.id));
  EXPECT_EQ(store_->run_file(runs[0].id, "profile.ncu-rep"), std::nullopt);
  EXPECT_EQ(query_int("SELECT COUNT(*) FROM run_files"), 0);
}

TEST_P(StoreTest, JobsAreCountedByState) {
  open();
  const std::map<JobState, int> empty = {
      {JobState::queued, 0}, {JobState::running, 0}, {JobState::done, 0}, {JobState::failed, 0}};
  EXPECT_EQ(store_->count_jobs_by_state(), empty);
  Id board = leaderboard();
  const Id alice = user("alice");
  for (const char* code : {"a", "b", "c"}) submit(alice, board, code);
  auto first = store_->claim_next_job("worker-1", kH200, 60s);
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(store_->complete(first->lease, accepted_outcome(1.0, now())));
  ASSERT_TRUE(store_->claim_next_job("worker-1", kH200, 60s).has_value());
  const std::map<JobState, int> expected = {
      {JobState::queued, 1}, {JobState::running, 1}, {JobState::done, 1}, {JobState::failed, 0}};
  EXPECT_EQ(store_->count_jobs_by_state(), expected);
}

TEST_P(StoreTest, QueuePositionCountsQueuedJobsOfTheSameGpuTypeAhead) {
  open();
  Id board = leaderboard();
  const Id alice = user("alice");
  const auto first = submit(alice, board, "a");
  submit(alice, board, "cpu job", "test", "cpu");  // another GPU type's queue
  const auto second = submit(alice, board, "b");
  const auto job_of = [&](const kj::store::Submission& s) {
    return store_->submission_jobs(s.id).front().id;
  };
  EXPECT_EQ(store_->queue_position(job_of(first)), 1);
  EXPECT_EQ(store_->queue_position(job_of(second)), 2);
  ASSERT_TRUE(store_->claim_next_job("worker-1", kH200, 60s).has_value());
  EXPECT_EQ(store_->queue_position(job_of(first)), std::nullopt);  // running: not waiting
  EXPECT_EQ(store_->queue_position(job_of(second)), 1);
  EXPECT_EQ(store_->queue_position(9999), std::nullopt);
}

TEST_P(StoreTest, DeletedSubmissionTakesItsRunsAndUnsharedCodeAlong) {
  open();
  Id board = leaderboard();
  const Id alice = user("alice");
  const auto judged = submit(alice, board, "unique code");
  const auto shared = submit(alice, board, "shared code");
  submit(alice, board, "shared code");
  judge("worker-1", 1.0);
  ASSERT_EQ(store_->ranking(board, "H200").size(), 1u);
  EXPECT_TRUE(store_->delete_submission(judged.id));
  EXPECT_FALSE(store_->get_submission(judged.id));
  EXPECT_TRUE(store_->submission_runs(judged.id).empty());
  EXPECT_TRUE(store_->ranking(board, "H200").empty());
  EXPECT_FALSE(store_->get_code(judged.code_sha256));
  EXPECT_EQ(
      query_int("SELECT COUNT(*) FROM jobs WHERE submission_id = " + std::to_string(judged.id)), 0);
  EXPECT_TRUE(store_->delete_submission(shared.id));
  EXPECT_TRUE(store_->get_code(shared.code_sha256));  // the other submission still has it
  EXPECT_FALSE(store_->delete_submission(judged.id));
}

TEST_P(StoreTest, OnlyTheLeaseHolderCompletes) {
  open();
  Id board = leaderboard();
  auto submission = submit(user("alice"), board, "code");
  auto claimed = store_->claim_next_job("worker-1", kH200, 60s);
  ASSERT_TRUE(claimed.has_value());
  auto stranger = claimed->lease;
  stranger.worker_id = "worker-2";
  EXPECT_FALSE(store_->complete(stranger, accepted_outcome(1, now())));
  EXPECT_FALSE(store_->heartbeat(stranger, 60s));
  EXPECT_FALSE(store_->release(stranger, "not mine"));
  EXPECT_FALSE(store_->append_progress(stranger, "{}").has_value());
  EXPECT_TRUE(store_->submission_runs(submission.id).empty());
  EXPECT_EQ(store_->get_job(claimed->job.id)->state, JobState::running);
  EXPECT_TRUE(store_->complete(claimed->lease, accepted_outcome(2, now())));
  EXPECT_EQ(store_->get_submission(submission.id)->score, 2);
}

TEST_P(StoreTest, InvalidRunJsonRollsBackTheWholeCompletion) {
  open();
  Id board = leaderboard();
  auto submission = submit(user("alice"), board, "code");
  auto claimed = store_->claim_next_job("worker-1", kH200, 60s);
  auto outcome = accepted_outcome(5, now());
  outcome.runs.push_back(outcome.runs[0]);
  outcome.runs[1].result_json = "{not json";
  EXPECT_THROW((void)store_->complete(claimed->lease, outcome), StoreError);
  EXPECT_TRUE(store_->submission_runs(submission.id).empty());
  EXPECT_EQ(store_->get_job(claimed->job.id)->state, JobState::running);
  EXPECT_EQ(store_->get_submission(submission.id)->status, SubmissionStatus::running);
  EXPECT_TRUE(store_->complete(claimed->lease, accepted_outcome(5, now())));
}

TEST_P(StoreTest, ExpiredLeaseIsRequeuedAndTheOldHolderLosesIt) {
  open();
  Id board = leaderboard();
  auto submission = submit(user("alice"), board, "code");
  auto first = store_->claim_next_job("worker-1", kH200, 30s);
  ASSERT_TRUE(first.has_value());
  advance(20s);
  EXPECT_TRUE(store_->heartbeat(first->lease, 30s));  // now expires at +50 s
  EXPECT_EQ(store_->requeue_expired(now() + 20s), 0);
  EXPECT_EQ(store_->requeue_expired(now() + 31s), 1);
  auto job = store_->get_job(first->job.id);
  EXPECT_EQ(job->state, JobState::queued);
  EXPECT_EQ(job->attempts, 1);
  EXPECT_EQ(job->error, "lease expired");
  EXPECT_EQ(store_->get_submission(submission.id)->status, SubmissionStatus::queued);

  EXPECT_FALSE(store_->heartbeat(first->lease, 30s));
  // The same worker id claiming again gets a new attempt; the stale lease stays dead.
  auto second = store_->claim_next_job("worker-1", kH200, 30s);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->lease.attempt, 2);
  EXPECT_FALSE(store_->complete(first->lease, accepted_outcome(1, now())));
  EXPECT_TRUE(store_->complete(second->lease, accepted_outcome(2, now())));
  EXPECT_EQ(store_->submission_runs(submission.id).size(), 1u);
  EXPECT_EQ(store_->get_submission(submission.id)->score, 2);
}

TEST_P(StoreTest, JobFailsWithInternalErrorAfterMaxAttempts) {
  open(/*max_attempts=*/2);
  Id board = leaderboard();
  auto submission = submit(user("alice"), board, "code");
  auto first = store_->claim_next_job("w", kH200, 10s);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(store_->requeue_expired(now() + 11s), 1);
  auto second = store_->claim_next_job("w", kH200, 10s);
  ASSERT_TRUE(second.has_value());
  EXPECT_TRUE(store_->release(second->lease, "GPU fell off the bus"));
  auto job = store_->get_job(first->job.id);
  EXPECT_EQ(job->state, JobState::failed);
  EXPECT_EQ(job->attempts, 2);
  EXPECT_NE(job->error.find("internal_error"), std::string::npos);
  EXPECT_NE(job->error.find("GPU fell off the bus"), std::string::npos);
  auto failed = store_->get_submission(submission.id);
  EXPECT_EQ(failed->status, SubmissionStatus::failed);
  EXPECT_EQ(failed->verdict, "internal_error");
  EXPECT_FALSE(store_->claim_next_job("w", kH200, 10s).has_value());
  EXPECT_FALSE(store_->complete(second->lease, accepted_outcome(1, now())));

  // A rejudge queues a fresh job for the same submission.
  auto again = store_->enqueue(submission.id, "H200");
  EXPECT_EQ(again.state, JobState::queued);
  EXPECT_EQ(store_->submission_jobs(submission.id).size(), 2u);
  EXPECT_EQ(store_->get_submission(submission.id)->status, SubmissionStatus::queued);
  EXPECT_THROW(store_->enqueue(submission.id + 100, "H200"), StoreError);
}

TEST_P(StoreTest, CrashedServerJobsAreRecoveredAndCompleteOnce) {
  open();
  Id board = leaderboard();
  auto submission = submit(user("alice"), board, "code");
  auto lost = store_->claim_next_job("worker-1", kH200, postgres() ? 60s : 3600s);
  ASSERT_TRUE(lost.has_value());
  store_.reset();  // the server dies mid-job

  open();
  // A shared PostgreSQL database recovers only expired leases (other servers' jobs run on).
  if (postgres()) {
    EXPECT_EQ(store_->recover_running_jobs(), 0);
    advance(61s);
  }
  EXPECT_EQ(store_->get_job(lost->job.id)->state, JobState::running);
  EXPECT_EQ(store_->recover_running_jobs(), 1);
  EXPECT_EQ(store_->get_job(lost->job.id)->state, JobState::queued);
  EXPECT_EQ(store_->recover_running_jobs(), 0);
  auto retried = store_->claim_next_job("worker-1", kH200, 60s);
  ASSERT_TRUE(retried.has_value());
  EXPECT_EQ(retried->job.id, lost->job.id);
  EXPECT_FALSE(store_->complete(lost->lease, accepted_outcome(1, now())));
  EXPECT_TRUE(store_->complete(retried->lease, accepted_outcome(2, now())));
  EXPECT_FALSE(store_->complete(retried->lease, accepted_outcome(3, now())));
  EXPECT_EQ(store_->submission_runs(submission.id).size(), 1u);
  EXPECT_EQ(store_->get_submission(submission.id)->score, 2);
}

TEST_P(StoreTest, ProgressEventsAreNumberedPerJob) {
  open();
  Id board = leaderboard();
  submit(user("alice"), board, "code");
  auto claimed = store_->claim_next_job("w", kH200, 60s);
  ASSERT_TRUE(claimed.has_value());
  EXPECT_EQ(store_->append_progress(claimed->lease, R"({"stage":"compile"})"), 1);
  advance(1s);
  EXPECT_EQ(store_->append_progress(claimed->lease, R"({"stage":"test","case":0})"), 2);
  EXPECT_THROW((void)store_->append_progress(claimed->lease, "not json"), StoreError);
  auto all = store_->progress_since(claimed->job.id, 0);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].event_json, R"({"stage":"compile"})");
  EXPECT_EQ(all[1].time - all[0].time, 1s);
  auto later = store_->progress_since(claimed->job.id, 1);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].seq, 2);
  ASSERT_TRUE(store_->complete(claimed->lease, accepted_outcome(1, now())));
  EXPECT_FALSE(store_->append_progress(claimed->lease, "{}").has_value());
}

// Several connections claim from one queue at once: every job is claimed exactly once.
void expect_each_claimed_once(const std::vector<Id>& claimed, const std::vector<Id>& jobs) {
  std::map<Id, int> times;
  for (Id id : claimed) ++times[id];
  EXPECT_EQ(claimed.size(), jobs.size());
  for (Id id : jobs) EXPECT_EQ(times[id], 1) << "job " << id;
}

TEST_P(StoreTest, ConcurrentThreadsClaimEachJobExactlyOnce) {
  open();
  Id board = leaderboard();
  Id alice = user("alice");
  std::vector<Id> jobs;
  for (int i = 0; i < 200; ++i) {
    auto submission = submit(alice, board, "code " + std::to_string(i));
    jobs.push_back(store_->submission_jobs(submission.id).at(0).id);
  }
  constexpr int kWorkers = 6;
  std::vector<std::vector<Id>> claimed(kWorkers);
  std::vector<std::thread> threads;
  std::atomic<int> refused_completions{0};
  for (int w = 0; w < kWorkers; ++w) {
    threads.emplace_back([&, w] {
      auto own = open_store(url_, options());
      std::string worker = "thread-" + std::to_string(w);
      while (auto job = own->claim_next_job(worker, kH200, 60s)) {
        claimed[w].push_back(job->job.id);
        if (!own->complete(job->lease, accepted_outcome(1, now()))) ++refused_completions;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  std::vector<Id> all;
  for (const auto& ids : claimed) all.insert(all.end(), ids.begin(), ids.end());
  expect_each_claimed_once(all, jobs);
  EXPECT_EQ(refused_completions.load(), 0);
  for (Id id : jobs) EXPECT_EQ(store_->get_job(id)->state, JobState::done);
}

TEST_P(StoreTest, ConcurrentProcessesClaimEachJobExactlyOnce) {
  open();
  Id board = leaderboard();
  Id alice = user("alice");
  std::vector<Id> jobs;
  for (int i = 0; i < 200; ++i) {
    auto submission = submit(alice, board, "code " + std::to_string(i));
    jobs.push_back(store_->submission_jobs(submission.id).at(0).id);
  }
  store_.reset();
  constexpr int kWorkers = 4;
  std::vector<pid_t> children;
  std::vector<int> read_ends;
  for (int w = 0; w < kWorkers; ++w) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      int status = 0;
      try {
        auto own = open_store(url_, options());
        std::string worker = "process-" + std::to_string(w);
        while (auto job = own->claim_next_job(worker, kH200, 60s)) {
          Id id = job->job.id;
          if (!own->complete(job->lease, accepted_outcome(1, now()))) status = 2;
          if (write(fds[1], &id, sizeof id) != static_cast<ssize_t>(sizeof id)) status = 3;
        }
      } catch (...) {
        status = 4;
      }
      close(fds[1]);
      _exit(status);
    }
    close(fds[1]);
    children.push_back(pid);
    read_ends.push_back(fds[0]);
  }
  std::vector<Id> all;
  for (int fd : read_ends) {
    Id id = 0;
    while (read(fd, &id, sizeof id) == static_cast<ssize_t>(sizeof id)) all.push_back(id);
    close(fd);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  }
  expect_each_claimed_once(all, jobs);
  open();
  for (Id id : jobs) EXPECT_EQ(store_->get_job(id)->state, JobState::done);
}

// ---- rankings and rate limits ---------------------------------------------------------------

TEST_P(StoreTest, RankingTakesEachUsersBestEligibleScore) {
  open();
  Id board = leaderboard();
  Id alice = user("alice");
  Id bob = user("bob");
  Id carol = user("carol");
  Id dave = user("dave");
  Id erin = user("erin");
  Id frank = user("frank");
  Id grace = user("grace");

  submit(alice, board, "a1");
  judge("w", 100);
  advance(1s);
  submit(alice, board, "a2");
  judge("w", 80);  // alice's best
  advance(1s);
  auto bob_fast = submit(bob, board, "b1");
  judge("w", 70);
  store_->set_submission_hacked(bob_fast.id, true);  // hacked: not ranked
  submit(bob, board, "b2");
  judge("w", 120);
  submit(carol, board, "c1");
  judge("w", 50, /*passed=*/false);  // failed: not ranked
  submit(dave, board, "d1", "benchmark");
  judge("w", 10, true, "benchmark");  // not a leaderboard run
  submit(erin, board, "e1");
  judge("w", 40, true, "leaderboard", /*secret_failed=*/true);
  submit(frank, board, "f1", "leaderboard", "cpu");
  judge("w", 5, true, "leaderboard", false, {"cpu"});  // another GPU type
  advance(1s);
  submit(grace, board, "g1");
  judge("w", 120);  // ties with bob, submitted later

  auto ranking = store_->ranking(board, "H200");
  ASSERT_EQ(ranking.size(), 3u);
  EXPECT_EQ(ranking[0].user_name, "alice");
  EXPECT_EQ(ranking[0].score, 80);
  EXPECT_EQ(ranking[0].rank, 1);
  EXPECT_EQ(ranking[1].user_name, "bob");
  EXPECT_EQ(ranking[1].score, 120);
  EXPECT_EQ(ranking[1].rank, 2);
  EXPECT_EQ(ranking[2].user_name, "grace");
  EXPECT_EQ(ranking[2].rank, 2);

  EXPECT_EQ(ranking[0].speedup, std::nullopt);  // the run's result has no speedup

  store_->set_submission_hacked(bob_fast.id, false);
  EXPECT_EQ(store_->ranking(board, "H200")[0].user_name, "bob");
  auto cpu = store_->ranking(board, "cpu");
  ASSERT_EQ(cpu.size(), 1u);
  EXPECT_EQ(cpu[0].user_id, frank);
  EXPECT_THROW(store_->set_submission_hacked(9999, true), StoreError);
  (void)carol;
  (void)dave;
  (void)erin;
}

// The ranked run's speedup over the reference comes with the ranking, from its result JSON;
// anything but a number there is none.
TEST_P(StoreTest, RankingCarriesTheRankedRunsSpeedup) {
  open();
  Id board = leaderboard();
  const std::pair<const char*, const char*> results[] = {{"alice", R"({"speedup":1.5,"tests":[]})"},
                                                         {"bob", R"({"speedup":null})"},
                                                         {"carol", R"({"speedup":"fast"})"},
                                                         {"dave", R"({"speedup":3})"}};
  double score = 1;
  for (const auto& [name, result] : results) {
    submit(user(name), board, name);
    auto claimed = store_->claim_next_job("w", kH200, 60s);
    ASSERT_TRUE(claimed.has_value());
    auto outcome = accepted_outcome(score++, now());
    outcome.runs[0].result_json = result;
    ASSERT_TRUE(store_->complete(claimed->lease, outcome));
  }
  const auto ranking = store_->ranking(board, "H200");
  ASSERT_EQ(ranking.size(), 4u);
  EXPECT_EQ(ranking[0].speedup, 1.5);
  EXPECT_EQ(ranking[1].speedup, std::nullopt);
  EXPECT_EQ(ranking[2].speedup, std::nullopt);
  EXPECT_EQ(ranking[3].speedup, 3.0);
}

TEST_P(StoreTest, RateWindowCountsTheLastHourAndSaysWhenToRetry) {
  open();
  Id board = leaderboard();
  Id other_board = leaderboard("softmax");
  Id alice = user("alice");
  submit(alice, board, "1");
  advance(10min);
  submit(alice, board, "2");
  advance(10min);
  submit(alice, board, "3", "test");
  submit(alice, other_board, "4");
  advance(10min);

  auto window = store_->rate_window(alice, board, "", 3, 1h);
  EXPECT_EQ(window.submissions, 3);
  ASSERT_TRUE(window.retry_after.has_value());
  EXPECT_EQ(*window.retry_after, 30min);  // the first one leaves the window in 30 minutes
  auto two_over = store_->rate_window(alice, board, "", 2, 1h);
  EXPECT_EQ(*two_over.retry_after, 40min);  // two must leave: the second one in 40 minutes
  EXPECT_FALSE(store_->rate_window(alice, board, "", 4, 1h).retry_after.has_value());
  auto ranked_only = store_->rate_window(alice, board, "leaderboard", 3, 1h);
  EXPECT_EQ(ranked_only.submissions, 2);
  EXPECT_FALSE(ranked_only.retry_after.has_value());

  advance(31min);
  auto later = store_->rate_window(alice, board, "", 3, 1h);
  EXPECT_EQ(later.submissions, 2);
  EXPECT_FALSE(later.retry_after.has_value());
}

// ---- workers and wake-ups ---------------------------------------------------------------------

kj::store::WorkerRegistration registration(const std::string& name, const std::string& host) {
  return {name, host, "cuda:0", "H200", 1};
}

TEST_P(StoreTest, DrainedWorkerFinishesItsJobAndClaimsNoMore) {
  open();
  Id board = leaderboard();
  Id alice = user("alice");
  submit(alice, board, "first");
  auto second = submit(alice, board, "second");
  store_->register_worker(registration("host-a:cuda:0", "host-a"));
  store_->register_worker(registration("host-b:cuda:0", "host-b"));
  auto claimed = store_->claim_next_job("host-a:cuda:0", kH200, 60s);
  ASSERT_TRUE(claimed.has_value());
  auto workers = store_->list_workers();
  ASSERT_EQ(workers.size(), 2u);
  EXPECT_EQ(workers[0].name, "host-a:cuda:0");
  EXPECT_EQ(workers[0].state, "busy");
  EXPECT_EQ(workers[0].current_job, claimed->job.id);
  EXPECT_EQ(workers[1].state, "idle");
  EXPECT_FALSE(workers[1].current_job.has_value());

  EXPECT_EQ(store_->request_drain("host-a"), 1);
  EXPECT_EQ(store_->request_drain("nobody"), 0);
  EXPECT_TRUE(store_->worker_heartbeat("host-a:cuda:0", "busy"));
  EXPECT_FALSE(store_->worker_heartbeat("host-b:cuda:0", "idle"));
  EXPECT_FALSE(store_->claim_next_job("host-a:cuda:0", kH200, 60s).has_value());
  EXPECT_TRUE(store_->complete(claimed->lease, accepted_outcome(1, now())));
  workers = store_->list_workers();
  EXPECT_EQ(workers[0].state, "drained");
  EXPECT_TRUE(workers[0].drain_requested);
  EXPECT_FALSE(workers[0].current_job.has_value());
  EXPECT_FALSE(store_->claim_next_job("host-a:cuda:0", kH200, 60s).has_value());
  auto other = store_->claim_next_job("host-b:cuda:0", kH200, 60s);
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->job.submission_id, second.id);

  // Started again, the worker takes jobs again.
  EXPECT_TRUE(store_->release(other->lease, "host-b stops"));
  store_->register_worker(registration("host-a:cuda:0", "host-a"));
  EXPECT_FALSE(store_->list_workers()[0].drain_requested);
  EXPECT_TRUE(store_->claim_next_job("host-a:cuda:0", kH200, 60s).has_value());
}

TEST_P(StoreTest, RestartedWorkerGetsNoStaleLeaseAndItsJobsAreRequeued) {
  open();
  Id board = leaderboard();
  auto submission = submit(user("alice"), board, "code");
  store_->register_worker(registration("host-a:cuda:0", "host-a"));
  auto before_crash = store_->claim_next_job("host-a:cuda:0", kH200, 3600s);
  ASSERT_TRUE(before_crash.has_value());
  // kill -9, then the same worker starts again: its old job is queued at once.
  store_->register_worker(registration("host-a:cuda:0", "host-a"));
  EXPECT_EQ(store_->get_job(before_crash->job.id)->state, JobState::queued);
  EXPECT_EQ(store_->list_workers()[0].state, "idle");
  auto again = store_->claim_next_job("host-a:cuda:0", kH200, 60s);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->lease.attempt, 2);
  // The late result of the first attempt is fenced off by its attempt number: nothing of it is
  // recorded, and the worker, busy with the second attempt of the same job, stays busy.
  EXPECT_FALSE(store_->complete(before_crash->lease, accepted_outcome(1, now())));
  EXPECT_TRUE(store_->submission_runs(submission.id).empty());
  EXPECT_EQ(store_->get_submission(submission.id)->status, SubmissionStatus::running);
  EXPECT_EQ(store_->get_job(again->job.id)->state, JobState::running);
  EXPECT_EQ(store_->list_workers()[0].state, "busy");
  EXPECT_EQ(store_->list_workers()[0].current_job, again->job.id);
  EXPECT_TRUE(store_->complete(again->lease, accepted_outcome(2, now())));
  EXPECT_EQ(store_->submission_runs(submission.id).size(), 1u);
  EXPECT_EQ(store_->list_workers()[0].state, "idle");
}

TEST_P(StoreTest, LateCompletionOfARequeuedJobRecordsNothing) {
  open();
  Id board = leaderboard();
  auto submission = submit(user("alice"), board, "code");
  store_->register_worker(registration("host-a:cuda:0", "host-a"));
  auto claimed = store_->claim_next_job("host-a:cuda:0", kH200, 30s);
  ASSERT_TRUE(claimed.has_value());
  EXPECT_EQ(store_->requeue_expired(now() + 31s), 1);  // presumed dead
  const auto worker_before = store_->list_workers()[0];
  EXPECT_FALSE(store_->complete(claimed->lease, accepted_outcome(1, now())));
  EXPECT_EQ(query_int("SELECT COUNT(*) FROM runs"), 0);
  auto after = store_->get_submission(submission.id);
  EXPECT_EQ(after->status, SubmissionStatus::queued);
  EXPECT_EQ(after->verdict, "");
  EXPECT_FALSE(after->score.has_value());
  auto job = store_->get_job(claimed->job.id);
  EXPECT_EQ(job->state, JobState::queued);
  EXPECT_EQ(job->error, "lease expired");
  const auto worker_after = store_->list_workers()[0];
  EXPECT_EQ(worker_after.state, worker_before.state);
  EXPECT_EQ(worker_after.heartbeat_at, worker_before.heartbeat_at);
}

// The sweeper's transaction requeues the job while the completion waits for the job's row: once
// the sweeper commits, the completion must see the job is no longer held and record nothing.
TEST_P(StoreTest, CompletionWaitingOnTheSweeperRecordsNothing) {
  open();
  Id board = leaderboard();
  auto submission = submit(user("alice"), board, "code");
  auto claimed = store_->claim_next_job("worker-1", kH200, 30s);
  ASSERT_TRUE(claimed.has_value());
  const std::string requeue =
      "UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_expires_at = NULL, error = "
      "'lease expired' WHERE id = " +
      std::to_string(claimed->job.id);
  std::unique_ptr<kj::store::detail::SqlConnection> pg_sweeper;
  sqlite3* sqlite_sweeper = nullptr;
  if (postgres()) {
    pg_sweeper = kj::store::detail::postgres_connection(url_);
    pg_sweeper->script("BEGIN");
    pg_sweeper->script(requeue);
  } else {
    ASSERT_EQ(sqlite3_open(path_.c_str(), &sqlite_sweeper), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(sqlite_sweeper, ("BEGIN IMMEDIATE; " + requeue).c_str(), nullptr,
                           nullptr, nullptr),
              SQLITE_OK);
  }
  auto completion = std::async(std::launch::async, [&] {
    return store_->complete(claimed->lease, accepted_outcome(1, now()));
  });
  EXPECT_EQ(completion.wait_for(500ms), std::future_status::timeout)
      << "the completion did not wait for the sweeper's transaction";
  if (postgres()) {
    pg_sweeper->script("COMMIT");
  } else {
    EXPECT_EQ(sqlite3_exec(sqlite_sweeper, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(sqlite_sweeper);
  }
  EXPECT_FALSE(completion.get());
  EXPECT_TRUE(store_->submission_runs(submission.id).empty());
  EXPECT_EQ(store_->get_job(claimed->job.id)->state, JobState::queued);
  EXPECT_NE(store_->get_submission(submission.id)->status, SubmissionStatus::done);
}

TEST_P(StoreTest, CompletionKeepsEveryRunFieldInOrder) {
  open();
  Id board = leaderboard();
  Id alice = user("alice");
  auto submission = submit(alice, board, "code");
  auto claimed = store_->claim_next_job("worker-1", kH200, 60s);
  ASSERT_TRUE(claimed.has_value());
  JobOutcome outcome;
  outcome.verdict = "wrong_answer";  // no score
  NewRun quoted;
  quoted.mode = "test";
  quoted.runner = R"(a "quoted", {braced} runner \ with a backslash)";
  quoted.passed = false;
  quoted.result_json = R"({"message":"NULL, \"x\" \\ {} ,","n":null})";
  quoted.start_time = now();
  quoted.end_time = now() + 1s;
  NewRun secret;
  secret.mode = "leaderboard";
  secret.runner = "NULL";  // the text, not a missing value
  secret.score = 1.5e-7;
  secret.passed = true;
  secret.secret = true;
  secret.compilation_json = R"({"log":"é ü 漢"})";
  secret.system_json = R"({"gpu":"NVIDIA H200"})";
  secret.start_time = now() + 2s;
  secret.end_time = now() + 3s;
  NewRun third = secret;
  third.mode = "benchmark";
  third.runner = "";
  third.score = 0.0;
  third.secret = false;
  outcome.runs = {quoted, secret, third};
  ASSERT_TRUE(store_->complete(claimed->lease, outcome));
  const auto runs = store_->submission_runs(submission.id);
  ASSERT_EQ(runs.size(), 3u);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const NewRun& sent = outcome.runs[i];
    SCOPED_TRACE("run " + std::to_string(i));
    EXPECT_EQ(runs[i].job_id, claimed->job.id);
    EXPECT_EQ(runs[i].mode, sent.mode);
    EXPECT_EQ(runs[i].runner, sent.runner);
    EXPECT_EQ(runs[i].score, sent.score);
    EXPECT_EQ(runs[i].passed, sent.passed);
    EXPECT_EQ(runs[i].secret, sent.secret);
    EXPECT_EQ(runs[i].compilation_json, sent.compilation_json);
    EXPECT_EQ(runs[i].result_json, sent.result_json);
    EXPECT_EQ(runs[i].system_json, sent.system_json);
    EXPECT_EQ(runs[i].start_time, sent.start_time);
    EXPECT_EQ(runs[i].end_time, sent.end_time);
  }
  auto done = store_->get_submission(submission.id);
  EXPECT_EQ(done->verdict, "wrong_answer");
  EXPECT_FALSE(done->score.has_value());

  // A completion without runs records the verdict alone.
  auto other = submit(alice, board, "other");
  auto next = store_->claim_next_job("worker-1", kH200, 60s);
  ASSERT_TRUE(next.has_value());
  JobOutcome no_runs;
  no_runs.verdict = "compile_error";
  ASSERT_TRUE(store_->complete(next->lease, no_runs));
  EXPECT_TRUE(store_->submission_runs(other.id).empty());
  EXPECT_EQ(store_->get_submission(other.id)->verdict, "compile_error");
}

// The server drops the store's connection (as a PostgreSQL restart does): the next call
// reconnects and prepares its statements again on the new connection.
TEST_P(StoreTest, QueueStatementsWorkAgainAfterTheConnectionWasDropped) {
  if (!postgres()) GTEST_SKIP() << "PostgreSQL connections only";
  open();
  Id board = leaderboard();
  Id alice = user("alice");
  auto first = submit(alice, board, "first");
  auto second = submit(alice, board, "second");
  auto drop_connections = [&] {
    admin()->script(
        "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE datname = '" +
        database_ + "'");
  };
  auto claimed = store_->claim_next_job("worker-1", kH200, 60s);
  ASSERT_TRUE(claimed.has_value());
  ASSERT_TRUE(store_->heartbeat(claimed->lease, 60s));
  drop_connections();
  EXPECT_TRUE(store_->heartbeat(claimed->lease, 60s));
  drop_connections();
  EXPECT_TRUE(store_->complete(claimed->lease, accepted_outcome(1, now())));
  drop_connections();
  auto next = store_->claim_next_job("worker-1", kH200, 60s);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->job.submission_id, second.id);
  EXPECT_EQ(next->code, "second");
  drop_connections();
  EXPECT_TRUE(store_->complete(next->lease, accepted_outcome(2, now())));
  EXPECT_FALSE(store_->complete(next->lease, accepted_outcome(3, now())));
  EXPECT_EQ(store_->submission_runs(first.id).size(), 1u);
  EXPECT_EQ(store_->submission_runs(second.id).size(), 1u);
}

TEST_P(StoreTest, WaitForJobsWakesWhenAnotherConnectionQueuesOne) {
  open();
  Id board = leaderboard();
  Id alice = user("alice");
  auto waiter = open_store(url_, options());
  EXPECT_TRUE(waiter->wait_for_jobs(kH200, 10ms));   // the first call: jobs may be waiting
  EXPECT_FALSE(waiter->wait_for_jobs(kH200, 50ms));  // nothing queued since
  std::thread producer([&] {
    std::this_thread::sleep_for(150ms);
    submit(alice, board, "wake up");
  });
  const auto start = std::chrono::steady_clock::now();
  const bool woke = waiter->wait_for_jobs(kH200, 10s);
  const auto waited = std::chrono::steady_clock::now() - start;
  producer.join();
  EXPECT_TRUE(woke);
  EXPECT_LT(waited, 3s) << "woke only after the timeout";
  EXPECT_GE(waited, 100ms);
  if (postgres()) {
    // Notifications carry the GPU type: a job for another GPU does not wake this worker.
    submit(alice, board, "for the MI300", "leaderboard", "MI300");
    EXPECT_FALSE(waiter->wait_for_jobs(kH200, 200ms));
  }
}

// Imported rows keep their published ids: as the store's ids where free; where a row of the
// store has one, under a new id with the published one in source_ids, which an export reads.
TEST_P(StoreTest, ImportKeepsSourceIdsWhereFreeAndRecordsTheRest) {
  using kj::store::SourceKind;
  open();
  const Id board = leaderboard("vectoradd");
  const Id carol = user("carol");
  const auto native = submit(carol, board, "carol's code");  // submission, code and job id 1

  kj::store::ImportedLeaderboard trimul;
  trimul.name = "trimul";
  trimul.reference = "def ref_kernel(data): ...\n";
  trimul.source_id = 595;
  kj::store::ImportedLeaderboard same_name;  // the store's vectoradd under another id
  same_name.name = "vectoradd";
  same_name.source_id = 7;
  const kj::store::ImportedLeaderboard boards[] = {trimul, same_name};
  auto collides = imported(595, "alice", 1, now());
  collides.source_id = native.id;
  collides.source_code_id = native.code_id;  // another code under the native code's id
  collides.source_user_id = "1169453225871634432";
  collides.source_run_ids = {std::nullopt};
  auto fits = imported(595, "alice", 2, now());
  fits.source_id = 1001;
  fits.source_code_id = 77;
  fits.source_user_id = collides.source_user_id;
  fits.source_run_ids = {5001};
  auto same_code = imported(595, "alice", 3, now());  // fits' code, under another published id
  same_code.code = fits.code;
  same_code.source_id = 1003;
  same_code.source_code_id = 78;
  std::vector<Id> board_ids;
  std::size_t i = 0;
  const std::vector<kj::store::ImportedSubmission> rows = {collides, fits, same_code};
  const auto outcome =
      store_->import_submissions(boards, board_ids, [&](kj::store::ImportedSubmission& s) {
        if (i == rows.size()) return false;
        s = rows[i++];
        return true;
      });
  EXPECT_EQ(outcome.submissions_added, 3);
  EXPECT_EQ(outcome.leaderboards_added, 1);
  EXPECT_EQ(board_ids, (std::vector<Id>{595, board}));
  EXPECT_EQ(store_->get_leaderboard("trimul")->reference, trimul.reference);

  const auto kept = store_->get_submission(1001);
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->code_id, 77);
  EXPECT_EQ(store_->submission_runs(1001).at(0).id, 5001);
  const auto submissions = store_->source_ids(SourceKind::submission);
  ASSERT_EQ(submissions.size(), 1u);
  const Id moved = submissions.begin()->first;
  EXPECT_NE(moved, native.id);
  EXPECT_EQ(submissions.begin()->second, std::to_string(native.id));
  EXPECT_EQ(store_->get_submission(native.id)->user_name, "carol") << "the native row stays";
  EXPECT_EQ(store_->get_submission(1003)->code_id, 77) << "one row per content";
  const auto codes = store_->source_ids(SourceKind::code);
  EXPECT_EQ(codes.size(), 1u) << "code 77 keeps its first published id";
  EXPECT_EQ(codes.at(store_->get_submission(moved)->code_id), std::to_string(native.code_id));
  const auto alice = store_->get_user("alice");
  EXPECT_EQ(store_->source_ids(SourceKind::user),
            (std::unordered_map<Id, std::string>{{alice->id, collides.source_user_id}}));
  EXPECT_EQ(store_->source_ids(SourceKind::leaderboard),
            (std::unordered_map<Id, std::string>{{board, "7"}}));

  // Again: nothing added, nothing recorded twice.
  i = 0;
  EXPECT_EQ(store_
                ->import_submissions(boards, board_ids,
                                     [&](kj::store::ImportedSubmission& s) {
                                       if (i == rows.size()) return false;
                                       s = rows[i++];
                                       return true;
                                     })
                .submissions_added,
            0);
  EXPECT_EQ(store_->source_ids(SourceKind::submission).size(), 1u);

  // New rows take ids after the kept ones (on PostgreSQL the sequences moved past them).
  EXPECT_GT(submit(carol, board, "later code").id, 1001);
  EXPECT_GT(leaderboard("softmax"), 595);
  // A deleted submission takes its source ids along.
  EXPECT_TRUE(store_->delete_submission(moved));
  EXPECT_TRUE(store_->source_ids(SourceKind::submission).empty());
  EXPECT_TRUE(store_->source_ids(SourceKind::code).empty());
}

TEST_P(StoreTest, ImportIsAllOrNothingAndIdempotent) {
  open();
  Id board = leaderboard();
  std::vector<kj::store::ImportedSubmission> batch;
  for (int n = 1; n <= 3; ++n) batch.push_back(imported(board, n == 3 ? "bob" : "alice", n, now()));
  EXPECT_EQ(store_->import_submissions(batch), 3);
  EXPECT_EQ(store_->import_submissions(batch), 0) << "the same submissions again add nothing";
  const auto count = [&] { return query_int("SELECT COUNT(*) FROM submissions"); };
  const auto users = [&] { return query_int("SELECT COUNT(*) FROM users"); };
  EXPECT_EQ(count(), 3);
  EXPECT_EQ(users(), 2);

  // A source that fails half-way (a bad row found while streaming): nothing of it is kept, and
  // what was stored before stays.
  int pulled = 0;
  EXPECT_THROW(store_->import_submissions([&](kj::store::ImportedSubmission& s) {
    if (++pulled == 3) throw std::runtime_error("row 3 is bad");
    s = imported(board, "carol", 10 + pulled, now());
    return true;
  }),
               StoreError);
  EXPECT_EQ(pulled, 3);
  EXPECT_EQ(count(), 3);
  EXPECT_EQ(users(), 2) << "the user created by the failed import is rolled back";
  EXPECT_EQ(query_int("SELECT COUNT(*) FROM runs"), 3);

  // Read back with and without the code.
  std::vector<std::string> codes;
  const Id ids[] = {board};
  store_->for_each_submission_record(ids, [&](const kj::store::SubmissionRecord& r) {
    codes.push_back(r.code);
    EXPECT_EQ(r.runs.size(), 1u);
  });
  EXPECT_EQ(codes, (std::vector<std::string>{batch[0].code, batch[1].code, batch[2].code}));
  int without = 0;
  store_->for_each_submission_record(ids, Store::RecordCode::without,
                                     [&](const kj::store::SubmissionRecord& r) {
                                       EXPECT_TRUE(r.code.empty());
                                       EXPECT_EQ(r.runs.size(), 1u);
                                       ++without;
                                     });
  EXPECT_EQ(without, 3);
}

// The submissions of `board` that `store` sees.
int submissions_seen(Store& store, Id board) {
  const Id ids[] = {board};
  int seen = 0;
  store.for_each_submission_record(ids, Store::RecordCode::without,
                                   [&](const kj::store::SubmissionRecord&) { ++seen; });
  return seen;
}

std::string sqlite_journal_mode(const std::string& path) {
  sqlite3* raw = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* statement = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(raw, "PRAGMA journal_mode", -1, &statement, nullptr), SQLITE_OK);
  EXPECT_EQ(sqlite3_step(statement), SQLITE_ROW);
  std::string mode = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
  sqlite3_finalize(statement);
  sqlite3_close(raw);
  return mode;
}

// An import into a SQLite store nothing else has open writes through a rollback journal: a store
// opened meanwhile (another kj process) waits for the import, then sees all of it, and the store
// is in WAL mode again afterwards.
TEST_P(StoreTest, StoreOpenedDuringAnImportWaitsForIt) {
  if (postgres()) GTEST_SKIP() << "SQLite journal modes";
  open();
  const Id board = leaderboard();
  std::future<int> seen;
  int pulled = 0;
  EXPECT_EQ(store_->import_submissions([&](kj::store::ImportedSubmission& s) {
    if (pulled == 2) {
      seen = std::async(std::launch::async, [&] {
        auto other = open_store(url_, options());
        return submissions_seen(*other, board);
      });
      std::this_thread::sleep_for(300ms);  // the other store is opening while the import runs
    }
    if (pulled == 4) return false;
    s = imported(board, "alice", ++pulled, now());
    return true;
  }),
            4);
  EXPECT_EQ(seen.get(), 4) << "the store opened during the import saw all of it";
  EXPECT_EQ(sqlite_journal_mode(path_), "wal");
}

// With another connection open (kj serve), the import runs beside it without waiting for it, and
// that connection sees the submissions once the import returns.
TEST_P(StoreTest, ImportBesideAnotherOpenStore) {
  if (postgres()) GTEST_SKIP() << "SQLite journal modes";
  open();
  const Id board = leaderboard();
  auto other = open_store(url_, options());
  EXPECT_EQ(submissions_seen(*other, board), 0);
  std::vector<kj::store::ImportedSubmission> batch;
  for (int n = 1; n <= 3; ++n) batch.push_back(imported(board, "alice", n, now()));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(store_->import_submissions(batch), 3);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s) << "the import waited for the other";
  EXPECT_EQ(submissions_seen(*other, board), 3);
  EXPECT_EQ(store_->import_submissions(batch), 0);
  EXPECT_EQ(sqlite_journal_mode(path_), "wal");
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest, ::testing::Values("sqlite", "postgres"),
                         [](const ::testing::TestParamInfo<std::string>& backend) {
                           return backend.param;
                         });

}  // namespace
