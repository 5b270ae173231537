// SQLite under the SQL store: the driver (a connection with a cache of prepared statements) and
// the dialect. One connection in WAL mode; writes hold the database's write lock (BEGIN
// IMMEDIATE), so rows need no locks of their own; wake-ups are a signal shared by the stores of
// this process on the same file.
#include <sqlite3.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>

#include "store/detail/dialect.h"

namespace kj::store::detail {
namespace {

// A failed SQLite call, by its extended result code.
SqlError sqlite_error(int code, const std::string& message) {
  const bool unique = code == SQLITE_CONSTRAINT_UNIQUE || code == SQLITE_CONSTRAINT_PRIMARYKEY;
  return SqlError(message, unique                         ? SqlError::Kind::unique_violation
                           : (code & 0xff) == SQLITE_BUSY ? SqlError::Kind::busy
                                                          : SqlError::Kind::other);
}

[[noreturn]] void fail(sqlite3* db, int code, std::string_view what) {
  throw sqlite_error(db ? sqlite3_extended_errcode(db) : code,
                     std::string(what) + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(code)));
}

void check(sqlite3* db, int code, std::string_view what) {
  if (code != SQLITE_OK) fail(db, code, what);
}

// $N placeholders as SQLite's ?N (the statements hold no '$' elsewhere).
std::string sqlite_placeholders(std::string_view sql) {
  std::string out(sql);
  std::replace(out.begin(), out.end(), '$', '?');
  return out;
}

void bind(sqlite3* db, sqlite3_stmt* statement, int index, const SqlParam& param) {
  struct Binder {
    sqlite3_stmt* s;
    int i;
    int operator()(std::monostate) const { return sqlite3_bind_null(s, i); }
    int operator()(std::int64_t v) const { return sqlite3_bind_int64(s, i, v); }
    int operator()(double v) const { return sqlite3_bind_double(s, i, v); }
    int operator()(std::string_view v) const {
      return sqlite3_bind_text64(s, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
    }
    int operator()(Bytes v) const {
      return sqlite3_bind_blob64(s, i, v.data.data(), v.data.size(), SQLITE_TRANSIENT);
    }
  };
  check(db, std::visit(Binder{statement, index}, param.value()), "bind");
}

// Steps a cached statement; resets it and clears its bindings when dropped.
class SqliteRows final : public SqlRows {
 public:
  SqliteRows(sqlite3* db, sqlite3_stmt* statement) : db_(db), statement_(statement) {}
  ~SqliteRows() override {
    sqlite3_reset(statement_);
    sqlite3_clear_bindings(statement_);
  }
  SqliteRows(const SqliteRows&) = delete;
  SqliteRows& operator=(const SqliteRows&) = delete;

  bool next() override {
    const int code = sqlite3_step(statement_);
    if (code == SQLITE_ROW) return true;
    if (code == SQLITE_DONE) return false;
    fail(db_, code, "step");
  }
  bool is_null(int column) const override {
    return sqlite3_column_type(statement_, column) == SQLITE_NULL;
  }
  std::int64_t int64(int column) const override { return sqlite3_column_int64(statement_, column); }
  double real(int column) const override { return sqlite3_column_double(statement_, column); }
  std::string text(int column) const override { return bytes(column); }  // UTF-8 as stored
  void bytes_into(int column, std::string& out) const override {
    const auto* data = static_cast<const char*>(sqlite3_column_blob(statement_, column));
    const auto size = data ? sqlite3_column_bytes(statement_, column) : 0;  // after the blob
    out.assign(data ? data : "", static_cast<std::size_t>(size));
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* statement_;
};

// One database file. Statements are prepared once (their $N placeholders read as ?N) and kept.
class SqliteConnection final : public SqlConnection {
 public:
  SqliteConnection(const std::string& path, std::chrono::milliseconds busy_timeout) {
    sqlite3* db = nullptr;
    const int code =
        sqlite3_open_v2(path.c_str(), &db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    db_.reset(db);
    if (code != SQLITE_OK) fail(db, code, "open " + path);
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, static_cast<int>(busy_timeout.count()));
  }

  std::unique_ptr<SqlRows> query(std::string_view sql, SqlParams params = {}) override {
    sqlite3_stmt* statement = prepared(sql);
    auto rows = std::make_unique<SqliteRows>(db_.get(), statement);
    int index = 1;
    for (const auto& param : params) bind(db_.get(), statement, index++, param);
    return rows;
  }
  int exec(std::string_view sql, SqlParams params = {}) override {
    for (auto rows = query(sql, params); rows->next();) {
    }
    return sqlite3_changes(db_.get());
  }
  // No RETURNING: in SQLite it costs more than reading the id back.
  std::int64_t insert(std::string_view sql, SqlParams params) override {
    exec(sql, params);
    return sqlite3_last_insert_rowid(db_.get());
  }
  void script(const std::string& sql) override {
    char* error = nullptr;
    const int code = sqlite3_exec(db_.get(), sql.c_str(), nullptr, nullptr, &error);
    if (code == SQLITE_OK) return;
    std::string message = error ? error : sqlite3_errstr(code);
    sqlite3_free(error);
    throw sqlite_error(sqlite3_extended_errcode(db_.get()), message);
  }
  // BEGIN IMMEDIATE takes the write lock up front, so a read-then-write cannot race another
  // connection; a snapshot reads from its first statement on.
  std::string begin_statement(Access access) const override {
    return access == Access::write ? "BEGIN IMMEDIATE" : "BEGIN";
  }
  bool usable() const override { return true; }

 private:
  sqlite3_stmt* prepared(std::string_view sql) {
    auto found = statements_.find(std::string(sql));
    if (found != statements_.end()) return found->second.get();
    const std::string text = sqlite_placeholders(sql);
    sqlite3_stmt* statement = nullptr;
    const int code = sqlite3_prepare_v3(db_.get(), text.c_str(), -1, SQLITE_PREPARE_PERSISTENT,
                                        &statement, nullptr);
    Statement owned(statement, sqlite3_finalize);
    check(db_.get(), code, "prepare");
    return statements_.emplace(std::string(sql), std::move(owned)).first->second.get();
  }

  using Statement = std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)>;
  std::unique_ptr<sqlite3, decltype(&sqlite3_close_v2)> db_{nullptr, sqlite3_close_v2};
  std::unordered_map<std::string, Statement> statements_;
};

// Wakes the workers of this process when a job is queued in a SQLite database they share: one
// signal per database file, a generation counter under a condition variable.
class QueueSignal {
 public:
  void notify() {
    {
      std::lock_guard lock(mutex_);
      ++generation_;
    }
    changed_.notify_all();
  }
  std::uint64_t generation() {
    std::lock_guard lock(mutex_);
    return generation_;
  }
  // Waits until the generation differs from `seen` or timeout; updates `seen`. True if it moved.
  bool wait_past(std::uint64_t& seen, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    const bool moved = changed_.wait_for(lock, timeout, [&] { return generation_ != seen; });
    seen = generation_;
    return moved;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::uint64_t generation_ = 0;
};

// The signal of one database (keyed by its path); lives while a store holds it.
std::shared_ptr<QueueSignal> queue_signal_for(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<QueueSignal>> signals;
  std::lock_guard lock(mutex);
  auto& slot = signals[path];
  auto signal = slot.lock();
  if (!signal) {
    signal = std::make_shared<QueueSignal>();
    slot = signal;
  }
  return signal;
}

constexpr SchemaSpelling kSqliteSpelling{
    "INTEGER PRIMARY KEY", "INTEGER",     "REAL", "BLOB", "length",
    " WITHOUT ROWID",      "json_valid(", ")"};

// `PRAGMA text`: the value it returns (empty: none).
std::string pragma(SqlConnection& db, const std::string& text) {
  auto row = db.query("PRAGMA " + text);
  return row->next() ? row->text(0) : std::string();
}

// Sets a PRAGMA of the connection for this object's lifetime, then restores the old value.
class ScopedPragma {
 public:
  ScopedPragma(SqlConnection& db, std::string name, const std::string& value)
      : db_(db), name_(std::move(name)), old_(pragma(db_, name_)) {
    result_ = pragma(db_, name_ + " = " + value);
  }
  ~ScopedPragma() {
    try {
      pragma(db_, name_ + " = " + old_);
    } catch (const SqlError&) {
      // A cache or map size, or a synchronous mode: the connection stays correct. A journal
      // mode: still a rollback journal, correct, and the next open switches the store to WAL.
    }
  }
  ScopedPragma(const ScopedPragma&) = delete;
  ScopedPragma& operator=(const ScopedPragma&) = delete;
  const std::string& result() const { return result_; }  // what setting it returned

 private:
  SqlConnection& db_;
  std::string name_, old_, result_;
};

// The settings of a bulk import. A page cache large enough for the indexes its transaction keeps
// touching (the default 2 MiB spills them to the WAL and reads them back on every row). No memory
// map: in WAL mode SQLite looks each page read through the map up in the WAL index first, a
// lookup that grows with the WAL the transaction writes.
//
// A bulk import of 200,000 submissions writes 1 GB of pages: in WAL mode once into the WAL and
// again into the database file by the checkpoint after the commit. When no other connection has
// the store open, the import runs with a rollback journal instead: the pages it adds go straight
// into the database file (SQLite journals only the pages that existed before the transaction),
// still one transaction that an error or a crash rolls back. Synchronous mode is FULL meanwhile,
// as a rollback journal needs for durability. The store is switched back to WAL mode afterwards
// (and every open switches it too). When another connection has the store open, the switch fails
// at once (SQLite does not call the busy handler for it) and the import runs in WAL mode.
struct BulkWrite {
  explicit BulkWrite(SqlConnection& db) : cache(db, "cache_size", std::to_string(-256 * 1024)) {
    try {
      journal.emplace(db, "journal_mode", "DELETE");
    } catch (const SqlError&) {
      return;  // SQLITE_BUSY: another connection has the store open; it keeps its WAL.
    }
    if (journal->result() == "delete") synchronous.emplace(db, "synchronous", "FULL");
  }
  ScopedPragma cache;                                // 256 MiB (a negative cache_size counts KiB)
  std::optional<ScopedPragma> journal, synchronous;  // restored in reverse order
};

class SqliteDialect final : public Dialect {
 public:
  SqliteDialect(const std::string& path, const StoreOptions& options)
      : path_(path), db_(path, options.busy_timeout), signal_(queue_signal_for(path)) {
    db_.script("PRAGMA foreign_keys = ON");
    // While an import holds the store with a rollback journal (BulkWrite), SQLite refuses the
    // switch back to WAL at once (SQLITE_BUSY, without calling the busy handler): wait for the
    // import here as for any other writer, up to the busy timeout.
    const std::string mode =
        retry(SqlError::Kind::busy, options.busy_timeout, std::chrono::milliseconds(20),
              std::chrono::milliseconds(20), [&] { return pragma(db_, "journal_mode = WAL"); });
    if (mode != "wal" && path_ != ":memory:") {
      throw StoreError("open", "cannot switch " + path_ + " to WAL mode (got " + mode + ")");
    }
    // In WAL mode NORMAL loses no committed transaction on a process crash, only on power loss.
    db_.script("PRAGMA synchronous = NORMAL");
  }

  const std::string& name() const override { return path_; }
  SqlConnection& connection() override { return db_; }
  const SchemaSpelling& spelling() const override { return kSqliteSpelling; }
  std::string next_id(std::string_view) const override { return "NULL"; }
  Id last_id(SqlConnection& db) override { return *db.scalar("SELECT last_insert_rowid()"); }
  std::string json_number(std::string_view column, std::string_view key) const override {
    // The path '$.key' spelled without a '$', which the placeholders' rewrite would take.
    const std::string path = "char(36) || '." + std::string(key) + "'";
    return "CASE WHEN json_type(" + std::string(column) + ", " + path +
           ") IN ('integer', 'real') THEN json_extract(" + std::string(column) + ", " + path +
           ") END";
  }

  // The oldest job of each GPU type from jobs_queued (gpu_type, id), the oldest of those taken;
  // the transaction holds the write lock, so no other connection claims it meanwhile.
  std::optional<ClaimedJob> claim(SqlConnection& db, const ClaimRequest& request) override {
    SqlTransaction transaction(db);
    std::optional<Id> oldest;
    for (const auto& gpu_type : request.gpu_types) {
      auto id = db.scalar(
          "SELECT id FROM jobs WHERE state = 'queued' AND gpu_type = $1 AND gpus_needed <= $2 AND "
          "NOT EXISTS (SELECT 1 FROM workers WHERE name = $3 AND drain = 1) ORDER BY id LIMIT 1",
          {gpu_type, request.max_gpus, request.worker_id});
      if (id && (!oldest || *id < *oldest)) oldest = id;
    }
    if (!oldest) return std::nullopt;
    db.exec(
        "UPDATE jobs SET state = 'running', attempts = attempts + 1, lease_owner = $2, "
        "lease_expires_at = $3, updated_at = $4 WHERE id = $1",
        {*oldest, request.worker_id, request.lease_expires_at, request.now});
    db.exec(
        "UPDATE submissions SET status = 'running' WHERE id = (SELECT submission_id FROM jobs "
        "WHERE id = $1)",
        {*oldest});
    db.exec(
        "UPDATE workers SET state = 'busy', current_job_id = $2, heartbeat_at = $3 WHERE name = $1",
        {request.worker_id, *oldest, request.now});
    auto claimed = db.first(
        select_claimed("(SELECT " + std::string(kJobFields) + " FROM jobs WHERE id = $1)"),
        {*oldest}, [&](const SqlRows& row) { return read_claimed(row, request.worker_id); });
    transaction.commit();
    return claimed;
  }

  void job_queued(SqlConnection&, std::string_view) override { queued_ = true; }
  void committed() override {
    if (std::exchange(queued_, false)) signal_->notify();
  }
  bool wait_for_jobs(std::span<const std::string>, std::chrono::milliseconds timeout) override {
    if (std::exchange(waited_, true)) return signal_->wait_past(seen_generation_, timeout);
    seen_generation_ = signal_->generation();
    return true;
  }

  // Reads of a bulk export through a memory map of up to 4 GiB of the database file (SQLite
  // caps it at its compile-time limit): one pread per 4 KiB page costs more than the copy.
  std::shared_ptr<void> bulk_read(SqlConnection& db) override {
    return std::make_shared<ScopedPragma>(db, "mmap_size", std::to_string(std::int64_t{1} << 32));
  }
  std::shared_ptr<void> bulk_write(SqlConnection& db) override {
    return std::make_shared<BulkWrite>(db);
  }

 private:
  std::string path_;
  SqliteConnection db_;
  std::shared_ptr<QueueSignal> signal_;
  bool queued_ = false;  // a job was queued by the operation running
  bool waited_ = false;
  std::uint64_t seen_generation_ = 0;
};

}  // namespace

std::unique_ptr<Dialect> sqlite_dialect(const std::string& path, const StoreOptions& options) {
  return std::make_unique<SqliteDialect>(path, options);
}

}  // namespace kj::store::detail
