// `kj submit` and `kj submissions`: the judge server's HTTP client and its progress display.
#pragma once

#include <cstdint>
#include <string>

namespace kj::client {

// Exit codes, as `kj eval`: 0 accepted, 1 another verdict, 2 usage or HTTP error, 3 the judge
// failed (internal_error).
inline constexpr int kExitAccepted = 0;
inline constexpr int kExitRejected = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInternal = 3;

struct Connection {
  std::string server;  // e.g. http://127.0.0.1:8080
  std::string token;
};

// Flags first, then $KJ_SERVER / $KJ_TOKEN, then ~/.config/kerneljudge/config.json
// ({"server": ..., "token": ...}); the server defaults to http://127.0.0.1:8080.
Connection resolve_connection(const std::string& server_flag, const std::string& token_flag);

struct SubmitOptions {
  std::string file;
  std::string leaderboard;  // empty: the server reads '#!POPCORN leaderboard' from the code
  std::string gpu;
  std::string mode = "test";
  bool json = false;  // print the final submission as JSON, no progress
};

// Uploads, follows progress (Server-Sent Events; reconnects with Last-Event-ID), prints the
// result. Returns an exit code.
int submit(const Connection& connection, const SubmitOptions& options);
int list_submissions(const Connection& connection, const std::string& leaderboard, bool json);
int show_submission(const Connection& connection, std::int64_t id, bool json);
// Deletes one of the caller's submissions (DELETE /api/submissions/{id}).
int delete_submission(const Connection& connection, std::int64_t id);

}  // namespace kj::client
