// `kj daemon`: keeps a harness warm on this host for `kj eval` (docs/cli.md, "kj daemon"). On a
// CPU it holds a zygote that imported torch once, on a GPU the next run's harness started ahead;
// `kj eval` sends it each call whose harness environment is exactly the daemon's, and judges
// anything else itself. One user's: the socket is in a directory only that user can enter, and
// calls from another uid are refused.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "cli/eval.h"

namespace kj::cli {

// $KJ_DAEMON_SOCKET, else $XDG_RUNTIME_DIR/kj/daemon.sock, else ~/.cache/kj/daemon.sock.
std::string default_daemon_socket();

struct DaemonOptions {
  std::string socket;
  std::string device = "cpu";
  std::string python;   // empty: as kj eval finds it
  std::string harness;  // empty: as kj eval finds it
  std::uint64_t memory_mib = EnvOptions{}.memory_mib;
};

// Serves calls until SIGINT, SIGTERM or `kj daemon stop`; each one runs to its end first. Then the
// socket is removed and the warm harness killed. Returns the exit code.
int run_daemon(const DaemonOptions& options);

// `kj daemon stop` / `kj daemon status`: exit 0 when a daemon answered, 1 when none runs there.
int stop_daemon(const std::string& socket, std::ostream& out);
int daemon_status(const std::string& socket, std::ostream& out);

// `call` judged by the daemon at `socket`, its output written to out and err: the exit code.
// Nothing when no daemon answers there, or it judges with another environment (why in *why).
std::optional<int> eval_by_daemon(const EvalCall& call, const std::string& socket,
                                  std::ostream& out, std::ostream& err, std::string* why);

}  // namespace kj::cli
