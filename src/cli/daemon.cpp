#include "cli/daemon.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <utility>

namespace kj::cli {
namespace fs = std::filesystem;

namespace {

// A request or an answer: one JSON object (a call carries its source, at most a few MiB).
constexpr std::size_t kMaxMessage = std::size_t{64} << 20;
// A client that connected must send its request within this; the daemon serves one at a time.
constexpr int kRequestTimeoutS = 10;

volatile std::sig_atomic_t stop_requested = 0;
void request_stop(int) { stop_requested = 1; }

// Owns one file descriptor.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_;
};

std::optional<sockaddr_un> socket_address(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof address.sun_path) return std::nullopt;
  path.copy(address.sun_path, path.size());
  return address;
}

// Connected to the daemon at `path`, or an invalid Fd when none listens there.
Fd connect_to(const std::string& path) {
  const auto address = socket_address(path);
  if (!address) return Fd();
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd ||
      ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&*address), sizeof *address) != 0) {
    return Fd();
  }
  return fd;
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// One message: everything up to the first newline (or the end), if it fits.
std::optional<std::string> read_message(int fd) {
  std::string data;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    data.append(buffer, static_cast<std::size_t>(n));
    if (const auto end = data.find('\n'); end != std::string::npos) {
      data.resize(end);
      break;
    }
    if (data.size() > kMaxMessage) return std::nullopt;
  }
  if (data.empty()) return std::nullopt;
  return data;
}

// The daemon's answer to `request`; nothing when no daemon answers at `socket`.
std::optional<nlohmann::json> ask(const std::string& socket, const nlohmann::json& request) {
  const Fd fd = connect_to(socket);
  if (!fd || !write_all(fd.get(), request.dump() + "\n")) return std::nullopt;
  ::shutdown(fd.get(), SHUT_WR);
  const auto answer = read_message(fd.get());
  if (!answer) return std::nullopt;
  auto json = nlohmann::json::parse(*answer, nullptr, false);
  if (json.is_discarded() || !json.is_object()) return std::nullopt;
  return json;
}

// What a harness run depends on, as the daemon and its clients compare it.
nlohmann::json environment_facts(const judge::Environment& environment, std::uint64_t memory_mib,
                                 const std::string& device) {
  nlohmann::json binds = nlohmann::json::array();
  for (const auto& bind : environment.binds)
    binds.push_back({bind.source, bind.target, bind.writable, bind.optional});
  return {{"device", device},
          {"python", environment.python.string()},
          {"harness", environment.harness_dir.string()},
          {"memory_mib", memory_mib},
          {"variables", environment.env},
          {"binds", binds},
          {"record_shim", environment.record_shim.string()},
          {"wrapper", environment.wrapper}};
}

// Why a call's facts are not the daemon's, in a few words; empty when they are the same.
std::string difference(const nlohmann::json& daemon, const nlohmann::json& call) {
  std::string why;
  for (const auto& [key, value] : daemon.items()) {
    if (call.contains(key) && call[key] == value) continue;
    if (!why.empty()) why += ", ";
    why += key;
    if (value.is_string() || value.is_number()) {
      why += " (daemon: " + (value.is_string() ? value.get<std::string>() : value.dump()) + ")";
    }
  }
  return why.empty() ? why : "it judges with another " + why;
}

std::string describe(const nlohmann::json& facts) {
  return "device " + facts.value("device", "") + ", " + facts.value("python", "") + ", " +
         std::to_string(facts.value("memory_mib", 0)) + " MiB";
}

}  // namespace

std::string default_daemon_socket() {
  const auto set = [](const char* value) { return value != nullptr && *value != '\0'; };
  if (const char* path = std::getenv("KJ_DAEMON_SOCKET"); set(path)) return path;
  if (const char* run = std::getenv("XDG_RUNTIME_DIR"); set(run))
    return (fs::path(run) / "kj" / "daemon.sock").string();
  if (const char* home = std::getenv("HOME"); set(home))
    return (fs::path(home) / ".cache" / "kj" / "daemon.sock").string();
  return "";
}

int run_daemon(const DaemonOptions& options) {
  EnvOptions env_options;
  env_options.device = options.device;
  env_options.python = options.python;
  env_options.harness = options.harness;
  env_options.memory_mib = options.memory_mib;
  if (env_options.device.find(',') != std::string::npos) {
    std::cerr << "kj daemon: one device (cpu or cuda:N), not a list\n";
    return kExitBadInput;
  }
  const judge::Environment environment = env_options.environment();
  const nlohmann::json facts = environment_facts(environment, options.memory_mib, options.device);
  const std::string& path = options.socket;
  const auto address = socket_address(path);
  if (!address) {
    std::cerr << "kj daemon: no usable socket path ('" << path << "'; --socket)\n";
    return kExitBadInput;
  }
  if (auto running = ask(path, {{"op", "status"}})) {
    std::cerr << "kj daemon: one is running at " << path << " already (pid "
              << running->value("pid", 0) << ")\n";
    return kExitBadInput;
  }
  // Only this user may enter the directory the daemon creates; the socket is the user's only.
  const fs::path dir = fs::path(path).parent_path();
  if (!dir.empty() && !fs::exists(dir)) {
    fs::create_directories(dir);
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
  }
  ::unlink(path.c_str());  // a socket left by a daemon that did not stop cleanly
  const Fd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!listener ||
      ::bind(listener.get(), reinterpret_cast<const sockaddr*>(&*address), sizeof *address) != 0 ||
      ::chmod(path.c_str(), 0600) != 0 || ::listen(listener.get(), 16) != 0) {
    std::cerr << "kj daemon: cannot listen on " << path << ": " << std::strerror(errno) << "\n";
    return kExitInternal;
  }

  struct sigaction action {};
  action.sa_handler = request_stop;  // no SA_RESTART: poll returns at once
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  // The warm harness: a zygote; once the keeper gave up on zygotes, the next call's harness
  // started ahead.
  sandbox::Limits limits;
  limits.memory_bytes = options.memory_mib << 20;
  std::optional<judge::ZygoteKeeper> zygotes(
      std::in_place, environment, limits,
      [](const std::string& line) { std::cerr << "kj daemon: " << line << "\n"; });
  judge::HarnessZygote* zygote = nullptr;
  std::unique_ptr<judge::WarmHarness> warm;
  const auto prepare = [&] {
    zygote = zygotes->get();
    if (zygote == nullptr) warm = std::make_unique<judge::WarmHarness>(environment, limits);
  };
  prepare();
  // What the daemon holds now, for `kj daemon status`.
  const auto warm_state = [&]() -> std::string {
    if (zygote == nullptr) return warm ? "the next harness, started ahead" : "none";
    zygote->wait_ready(std::chrono::milliseconds(50));  // its pid, once it is up
    if (zygote->failed())
      return "zygote failed (" + zygote->failure() + "); the next call starts a new one";
    return zygote->pid() > 0 ? "zygote pid " + std::to_string(zygote->pid()) : "zygote starting";
  };
  std::cout << "kj daemon: listening on " << path << " (pid " << ::getpid() << "): kj eval with "
            << describe(facts) << " is judged here; stop with `kj daemon stop` or Ctrl-C"
            << std::endl;

  int served = 0;
  while (stop_requested == 0) {
    pollfd ready{listener.get(), POLLIN, 0};
    if (::poll(&ready, 1, 250) <= 0) continue;
    const Fd client(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!client) continue;
    ucred peer{};
    socklen_t size = sizeof peer;
    if (::getsockopt(client.get(), SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0 ||
        peer.uid != ::getuid()) {
      write_all(client.get(), nlohmann::json{{"refused", "another user's daemon"}}.dump() + "\n");
      continue;
    }
    const timeval timeout{kRequestTimeoutS, 0};
    ::setsockopt(client.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    const auto message = read_message(client.get());
    const auto request =
        message ? nlohmann::json::parse(*message, nullptr, false) : nlohmann::json(nullptr);
    const std::string op = request.is_object() ? request.value("op", "") : "";
    nlohmann::json answer;
    if (op == "status") {
      answer = {
          {"pid", ::getpid()}, {"served", served}, {"environment", facts}, {"warm", warm_state()}};
    } else if (op == "stop") {
      answer = {{"stopping", true}, {"pid", ::getpid()}, {"served", served}};
      stop_requested = 1;
    } else if (op == "eval" && request.contains("call") && request.contains("environment")) {
      const std::string why = difference(facts, request["environment"]);
      if (!why.empty()) {
        answer = {{"refused", why}};
      } else {
        std::ostringstream out, err;
        int code = kExitInternal;
        try {
          code = run_eval(eval_call_from_json(request["call"]), out, err, {zygote, warm.get()});
        } catch (...) {
          code = exit_for_current_exception(err);
        }
        answer = {
            {"exit", code}, {"stdout", out.str()}, {"stderr", err.str()}, {"pid", ::getpid()}};
        ++served;
        prepare();
      }
    } else {
      answer = {{"refused", "not a request of kj's"}};
    }
    write_all(client.get(),
              answer.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  }
  ::unlink(path.c_str());
  zygote = nullptr;
  zygotes.reset();
  warm.reset();
  std::cout << "kj daemon: stopped after " << served << " call(s); " << path << " removed"
            << std::endl;
  return 0;
}

int stop_daemon(const std::string& socket, std::ostream& out) {
  const auto answer = ask(socket, {{"op", "stop"}});
  if (!answer || !answer->value("stopping", false)) {
    out << "no kj daemon at " << socket << "\n";
    return kExitRejected;
  }
  out << "kj daemon (pid " << answer->value("pid", 0) << ") stops after "
      << answer->value("served", 0) << " call(s)\n";
  return 0;
}

int daemon_status(const std::string& socket, std::ostream& out) {
  const auto answer = ask(socket, {{"op", "status"}});
  if (!answer || !answer->contains("pid")) {
    out << "no kj daemon at " << socket << "\n";
    return kExitRejected;
  }
  const nlohmann::json facts = answer->value("environment", nlohmann::json::object());
  out << "kj daemon at " << socket << ": pid " << answer->value("pid", 0) << ", " << describe(facts)
      << ", harness " << facts.value("harness", "") << ", " << answer->value("served", 0)
      << " call(s) served, warm: " << answer->value("warm", "") << "\n";
  return 0;
}

std::optional<int> eval_by_daemon(const EvalCall& call, const std::string& socket,
                                  std::ostream& out, std::ostream& err, std::string* why) {
  if (!connect_to(socket)) return std::nullopt;  // no daemon: nothing else is done
  EvalCall sent = call;
  const judge::Environment environment = call.options.environment();
  sent.options.python = environment.python.string();
  sent.options.harness = environment.harness_dir.string();
  const auto answer =
      ask(socket, {{"op", "eval"},
                   {"environment",
                    environment_facts(environment, call.options.memory_mib, call.options.device)},
                   {"call", to_json(sent)}});
  if (!answer) {
    if (why != nullptr) *why = "the daemon at " + socket + " ended without answering";
    return std::nullopt;
  }
  if (answer->contains("refused")) {
    if (why != nullptr) *why = answer->value("refused", "refused");
    return std::nullopt;
  }
  err << "kj eval: judged by the kj daemon (pid " << answer->value("pid", 0) << ") at " << socket
      << "\n";
  err << answer->value("stderr", "");
  out << answer->value("stdout", "");
  return answer->value("exit", kExitInternal);
}

}  // namespace kj::cli
