#include "client/client.h"

#include <httplib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include "bench/stats.h"
#include "problem/problem.h"

namespace kj::client {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// An HTTP failure or refusal, already phrased for the user.
struct RequestFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

httplib::Headers auth_headers(const Connection& c) {
  if (c.token.empty()) return {};
  return {{"Authorization", "Bearer " + c.token}};
}

std::unique_ptr<httplib::Client> make_client(const Connection& c) {
  auto client = std::make_unique<httplib::Client>(c.server);
  if (!client->is_valid()) throw RequestFailed("invalid server URL '" + c.server + "'");
  client->set_connection_timeout(std::chrono::seconds(10));
  client->set_read_timeout(std::chrono::seconds(60));
  return client;
}

// The body as JSON, or RequestFailed with the server's error message.
json checked(const httplib::Result& result, const Connection& c, int expected_status) {
  if (!result) {
    throw RequestFailed("cannot reach " + c.server + ": " + httplib::to_string(result.error()));
  }
  json body = json::parse(result->body, nullptr, false);
  if (result->status != expected_status) {
    std::string message = "HTTP " + std::to_string(result->status);
    if (body.is_object() && body.contains("error")) {
      message += " " + body["error"].value("code", "") + ": " + body["error"].value("message", "");
    }
    if (result->status == 429 && result->has_header("Retry-After")) {
      message += " (Retry-After: " + result->get_header_value("Retry-After") + " s)";
    }
    throw RequestFailed(message);
  }
  return body;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RequestFailed("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string describe_spec(const json& spec) {
  return spec.is_object() ? problem::describe_args(nlohmann::ordered_json(spec)) : "";
}

// The stored result of a run, compactly: per-case status, timings, then the verdict.
void print_result(const json& submission) {
  std::cout << "submission " << submission.value("id", 0) << " · "
            << submission.value("leaderboard", "") << " · " << submission.value("gpu", "") << " · "
            << submission.value("mode", "") << " · " << submission.value("file_name", "") << "\n";
  const json* result = nullptr;
  const json& runs = submission.contains("runs") ? submission["runs"] : json::array();
  for (const auto& run : runs) {
    if (!run.value("secret", false) && run.contains("result") && run["result"].is_object()) {
      result = &run["result"];
      break;
    }
  }
  if (result) {
    auto cases = [&](const char* key, const char* title) {
      if (!result->contains(key) || (*result)[key].empty()) return;
      std::cout << title << ":\n";
      for (const auto& c : (*result)[key]) {
        std::cout << "  " << std::setw(4) << std::left << c.value("status", "") << " "
                  << describe_spec(c.value("spec", json::object()));
        if (c.contains("summary") && c["summary"].value("n", 0) > 0) {
          std::cout << "  median " << bench::format_ns(c["summary"].value("median_ns", 0.0))
                    << " (n " << c["summary"].value("n", 0) << ")";
          if (c.contains("speedup") && c["speedup"].is_number()) {
            std::cout << "  " << bench::format_speedup(c["speedup"].get<double>())
                      << " the reference";
          }
        }
        if (!c.value("message", "").empty()) std::cout << "  " << c.value("message", "");
        std::cout << "\n";
      }
    };
    cases("tests", "tests");
    cases("benchmarks", "benchmarks");
    if (result->contains("error") && (*result)["error"].is_object()) {
      std::cout << "error: " << (*result)["error"].value("type", "") << ": "
                << (*result)["error"].value("message", "") << "\n";
    }
  }
  const std::string verdict =
      submission["verdict"].is_string() ? submission["verdict"].get<std::string>() : "(none)";
  std::cout << "verdict: " << verdict;
  if (result && !result->value("reason", "").empty())
    std::cout << " — " << (*result)["reason"].get<std::string>();
  if (submission.contains("score") && submission["score"].is_number()) {
    std::cout << " · score " << bench::format_ns(submission["score"].get<double>() * 1e9);
  }
  std::cout << "\n";
}

int exit_code_for(const json& submission) {
  const std::string verdict =
      submission["verdict"].is_string() ? submission["verdict"].get<std::string>() : "";
  if (verdict == "accepted") return kExitAccepted;
  return verdict == "internal_error" || verdict.empty() ? kExitInternal : kExitRejected;
}

std::string progress_line(const json& event) {
  const std::string kind = event.value("event", "");
  if (kind == "claimed") {
    return "judging on " + event.value("device", "?") + " (attempt " +
           std::to_string(event.value("attempt", 0)) + ")";
  }
  if (kind == "stage") {
    std::string line = event.value("stage", "") + ": " + event.value("state", "");
    if (event.contains("mode")) line += " (" + event.value("mode", "") + ")";
    if (event.contains("seconds")) {
      std::ostringstream s;
      s << std::fixed << std::setprecision(1) << event["seconds"].get<double>();
      line += " in " + s.str() + " s";
    }
    return line;
  }
  if (kind == "verdict") return "verdict: " + event.value("verdict", "");
  if (kind == "released") return "infrastructure fault, queued again: " + event.value("error", "");
  return event.dump();
}

// Follows /events until the `result` event; reconnects (with Last-Event-ID) while the server is
// unreachable, up to about two minutes.
void follow_events(const Connection& c, std::int64_t id, bool show) {
  const bool tty = show && isatty(STDOUT_FILENO);
  std::string last_event_id;
  bool finished = false;
  int failures = 0;
  while (!finished) {
    auto client = make_client(c);
    client->set_read_timeout(std::chrono::seconds(60));
    auto headers = auth_headers(c);
    if (!last_event_id.empty()) headers.emplace("Last-Event-ID", last_event_id);
    std::string buffer;
    int status = 0;
    const auto result = client->Get(
        "/api/submissions/" + std::to_string(id) + "/events", headers,
        [&](const httplib::Response& response) {
          status = response.status;
          return response.status == 200;
        },
        [&](const char* data, std::size_t size) {
          buffer.append(data, size);
          std::size_t end;
          while ((end = buffer.find("\n\n")) != std::string::npos) {
            const std::string block = buffer.substr(0, end);
            buffer.erase(0, end + 2);
            std::string event = "message", payload, event_id;
            std::istringstream lines(block);
            for (std::string line; std::getline(lines, line);) {
              if (line.rfind("event: ", 0) == 0) event = line.substr(7);
              if (line.rfind("data: ", 0) == 0) payload += line.substr(6);
              if (line.rfind("id: ", 0) == 0) event_id = line.substr(4);
            }
            if (!event_id.empty()) last_event_id = event_id;
            if (event == "result") {
              finished = true;
            } else if ((event == "progress" || event == "queue") && show) {
              const json parsed = json::parse(payload, nullptr, false);
              const std::string line = event == "queue"
                                           ? "waiting: place " +
                                                 std::to_string(parsed.value("position", 0)) +
                                                 " in the queue"
                                           : progress_line(parsed);
              if (tty) {
                std::cout << "\r\033[K" << line << std::flush;
              } else {
                std::cout << line << "\n" << std::flush;
              }
            }
          }
          return true;
        });
    if (tty) std::cout << "\r\033[K" << std::flush;
    if (finished) return;
    if (status != 0 && status != 200) {
      throw RequestFailed("HTTP " + std::to_string(status) + " following submission " +
                          std::to_string(id));
    }
    if (++failures > 60) throw RequestFailed("lost the connection to " + c.server);
    if (!result || result->status == 200) {
      if (show && !tty) std::cout << "connection lost, reconnecting\n" << std::flush;
      std::this_thread::sleep_for(std::chrono::seconds(2));  // backoff before reconnecting
    }
  }
}

json get_submission(const Connection& c, std::int64_t id) {
  auto client = make_client(c);
  return checked(client->Get("/api/submissions/" + std::to_string(id), auth_headers(c)), c, 200);
}

template <typename Body>
int guarded(Body body) {
  try {
    return body();
  } catch (const RequestFailed& e) {
    std::cerr << "kj: " << e.what() << "\n";
    return kExitUsage;
  } catch (const nlohmann::json::exception& e) {
    std::cerr << "kj: unexpected answer from the server: " << e.what() << "\n";
    return kExitUsage;
  }
}

}  // namespace

Connection resolve_connection(const std::string& server_flag, const std::string& token_flag) {
  Connection c;
  json config = json::object();
  if (const char* home = std::getenv("HOME")) {
    std::ifstream in(fs::path(home) / ".config" / "kerneljudge" / "config.json");
    if (in) config = json::parse(in, nullptr, false);
    if (!config.is_object()) config = json::object();
  }
  auto pick = [&](const std::string& flag, const char* env, const char* key) {
    if (!flag.empty()) return flag;
    if (const char* value = std::getenv(env); value && *value) return std::string(value);
    return config.contains(key) && config[key].is_string() ? config[key].get<std::string>()
                                                           : std::string();
  };
  c.server = pick(server_flag, "KJ_SERVER", "server");
  if (c.server.empty()) c.server = "http://127.0.0.1:8080";
  while (!c.server.empty() && c.server.back() == '/') c.server.pop_back();
  c.token = pick(token_flag, "KJ_TOKEN", "token");
  return c;
}

int submit(const Connection& c, const SubmitOptions& options) {
  return guarded([&] {
    if (c.token.empty())
      throw RequestFailed(
          "no token: pass --token, set KJ_TOKEN, or add one to ~/.config/kerneljudge/config.json");
    json request = {{"code", read_file(options.file)},
                    {"file_name", fs::path(options.file).filename().string()},
                    {"mode", options.mode}};
    if (!options.leaderboard.empty()) request["leaderboard"] = options.leaderboard;
    if (!options.gpu.empty()) request["gpu"] = options.gpu;
    auto client = make_client(c);
    const json created = checked(
        client->Post("/api/submissions", auth_headers(c), request.dump(), "application/json"), c,
        201);
    const std::int64_t id = created.value("id", std::int64_t{0});
    if (!options.json) {
      std::cout << "submission " << id << " queued on " << created.value("leaderboard", "") << " ("
                << created.value("gpu", "") << ", " << created.value("mode", "") << ")\n"
                << std::flush;
    }
    follow_events(c, id, !options.json);
    const json final_submission = get_submission(c, id);
    if (options.json) {
      std::cout << final_submission.dump(2) << "\n";
    } else {
      print_result(final_submission);
    }
    return exit_code_for(final_submission);
  });
}

int list_submissions(const Connection& c, const std::string& leaderboard, bool as_json) {
  return guarded([&] {
    auto client = make_client(c);
    std::string path = "/api/submissions?mine";
    if (!leaderboard.empty())
      path += "&leaderboard=" + httplib::detail::encode_query_param(leaderboard);
    const json body = checked(client->Get(path, auth_headers(c)), c, 200);
    if (as_json) {
      std::cout << body.dump(2) << "\n";
      return kExitAccepted;
    }
    std::cout << std::left << std::setw(8) << "id" << std::setw(16) << "leaderboard" << std::setw(8)
              << "gpu" << std::setw(13) << "mode" << std::setw(9) << "status" << std::setw(20)
              << "verdict" << std::setw(12) << "score"
              << "file\n";
    for (const auto& s : body["submissions"]) {
      const std::string score =
          s["score"].is_number() ? bench::format_ns(s["score"].get<double>() * 1e9) : "-";
      std::cout << std::setw(8) << s.value("id", 0) << std::setw(16) << s.value("leaderboard", "")
                << std::setw(8) << s.value("gpu", "") << std::setw(13) << s.value("mode", "")
                << std::setw(9) << s.value("status", "") << std::setw(20)
                << (s["verdict"].is_string() ? s["verdict"].get<std::string>() : "-")
                << std::setw(12) << score << s.value("file_name", "") << "\n";
    }
    return kExitAccepted;
  });
}

int show_submission(const Connection& c, std::int64_t id, bool as_json) {
  return guarded([&] {
    const json s = get_submission(c, id);
    if (as_json) {
      std::cout << s.dump(2) << "\n";
    } else {
      print_result(s);
    }
    return s["status"] == "done" || s["status"] == "failed" ? exit_code_for(s) : kExitAccepted;
  });
}

int delete_submission(const Connection& c, std::int64_t id) {
  return guarded([&] {
    auto client = make_client(c);
    checked(client->Delete("/api/submissions/" + std::to_string(id), auth_headers(c)), c, 200);
    std::cout << "deleted submission " << id << "\n";
    return kExitAccepted;
  });
}

}  // namespace kj::client
