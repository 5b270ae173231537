// Translator clients: an OpenAI-compatible chat-completions endpoint and an external command;
// extracting the Triton code from a reply.
#include <fcntl.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <regex>
#include <thread>

#include "bootstrap/bootstrap.h"
#include "bootstrap/detail/scratch.h"
#include "problem/linear_regex.h"

extern char** environ;

namespace kj::bootstrap {

namespace {

struct Url {
  std::string scheme_host_port;  // http://host:port
  std::string path;              // /v1
};

Url parse_base_url(const std::string& base_url) {
  static const std::regex pattern(R"(^(https?)://([^/]+)(/.*)?$)");
  std::smatch match;
  if (!std::regex_match(base_url, match, pattern)) {
    throw std::invalid_argument("translator URL " + base_url +
                                ": expected http://host[:port][/path]");
  }
  if (match[1] == "https") {
    throw std::invalid_argument("translator URL " + base_url +
                                ": this build speaks plain HTTP only (no TLS); reach an HTTPS "
                                "endpoint through a local proxy, or use --translator-command");
  }
  std::string path = match[3].matched ? match[3].str() : "";
  while (!path.empty() && path.back() == '/') path.pop_back();
  return {match[1].str() + "://" + match[2].str(), path};
}

class ChatTranslator final : public Translator {
 public:
  explicit ChatTranslator(ChatEndpoint endpoint)
      : endpoint_(std::move(endpoint)), url_(parse_base_url(endpoint_.base_url)) {
    if (!endpoint_.api_key_env.empty()) {
      const char* key = std::getenv(endpoint_.api_key_env.c_str());
      if (key == nullptr || *key == '\0') {
        throw std::invalid_argument("the API key variable " + endpoint_.api_key_env +
                                    " is not set");
      }
      api_key_ = key;
    }
  }

  TranslatorReply complete(const std::vector<ChatMessage>& messages) override {
    nlohmann::json body = {{"model", endpoint_.model},
                           {"temperature", endpoint_.temperature},
                           {"max_tokens", endpoint_.max_tokens},
                           {"messages", nlohmann::json::array()}};
    for (const auto& message : messages) {
      body["messages"].push_back({{"role", message.role}, {"content", message.content}});
    }
    const std::string payload = body.dump();
    httplib::Headers headers;
    if (!api_key_.empty()) headers.emplace("Authorization", "Bearer " + api_key_);
    std::string last_error;
    auto wait = endpoint_.backoff;
    for (int attempt = 0; attempt <= endpoint_.retries; ++attempt) {
      httplib::Client client(url_.scheme_host_port);
      const auto seconds = static_cast<time_t>(endpoint_.timeout.count());
      client.set_connection_timeout(std::min<time_t>(seconds, 30), 0);
      client.set_read_timeout(seconds, 0);
      client.set_write_timeout(seconds, 0);
      auto response =
          client.Post(url_.path + "/chat/completions", headers, payload, "application/json");
      std::chrono::milliseconds retry_after{0};
      if (!response) {
        last_error = "request failed: " + httplib::to_string(response.error());
      } else if (response->status == 200) {
        return parse(response->body);
      } else {
        last_error =
            "HTTP " + std::to_string(response->status) + ": " + response->body.substr(0, 500);
        const bool retryable = response->status == 429 || response->status >= 500;
        if (!retryable) throw TranslatorError("translator " + last_error);
        if (response->has_header("Retry-After")) {
          try {
            retry_after =
                std::chrono::seconds(std::stol(response->get_header_value("Retry-After")));
          } catch (const std::exception&) {
          }
        }
      }
      if (attempt == endpoint_.retries) break;
      std::this_thread::sleep_for(
          std::max(wait, std::min(retry_after, std::chrono::milliseconds(120000))));
      wait *= 2;
    }
    throw TranslatorError("translator gave up after " + std::to_string(endpoint_.retries + 1) +
                          " attempts: " + last_error);
  }

 private:
  static TranslatorReply parse(const std::string& body) {
    const auto json = nlohmann::json::parse(body, nullptr, false);
    if (json.is_discarded() || !json.contains("choices") || !json["choices"].is_array() ||
        json["choices"].empty()) {
      throw TranslatorError("translator reply is not a chat completion: " + body.substr(0, 300));
    }
    const auto& choice = json["choices"][0];
    const auto& message = choice.value("message", nlohmann::json::object());
    TranslatorReply reply;
    auto text = [](const nlohmann::json& value) {
      return value.is_string() ? value.get<std::string>() : std::string();
    };
    reply.content = text(message.value("content", nlohmann::json()));
    reply.reasoning = text(message.value("reasoning_content", nlohmann::json()));
    if (reply.reasoning.empty())
      reply.reasoning = text(message.value("reasoning", nlohmann::json()));
    reply.finish_reason = text(choice.value("finish_reason", nlohmann::json()));
    return reply;
  }

  ChatEndpoint endpoint_;
  Url url_;
  std::string api_key_;
};

// A spawned process group, killed and reaped on destruction if still running.
class ChildProcess {
 public:
  ChildProcess(const std::string& command, const std::filesystem::path& stdin_path,
               const std::filesystem::path& stdout_path, std::vector<std::string> extra_env) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, stdin_path.c_str(), O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    std::vector<std::string> env_strings;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) env_strings.emplace_back(*e);
    for (auto& e : extra_env) env_strings.push_back(std::move(e));
    std::vector<char*> envp;
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string shell = "/bin/sh", flag = "-c", text = command;
    char* argv[] = {shell.data(), flag.data(), text.data(), nullptr};
    const int rc = posix_spawn(&pid_, "/bin/sh", &actions, &attributes, argv, envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (rc != 0) {
      pid_ = -1;
      throw TranslatorError("cannot start the translator command: " +
                            std::string(std::strerror(rc)));
    }
  }
  ~ChildProcess() {
    if (pid_ > 0) {
      kill(-pid_, SIGKILL);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // The exit status, or nullopt when `timeout` passed first.
  std::optional<int> wait(std::chrono::seconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      int status = 0;
      const pid_t done = waitpid(pid_, &status, WNOHANG);
      if (done == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      if (done < 0 && errno != EINTR) {
        pid_ = -1;
        return -1;
      }
      if (std::chrono::steady_clock::now() > deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

 private:
  pid_t pid_ = -1;
};

class CommandTranslator final : public Translator {
 public:
  CommandTranslator(std::string command, std::chrono::seconds timeout)
      : command_(std::move(command)), timeout_(timeout) {}

  TranslatorReply complete(const std::vector<ChatMessage>& messages) override {
    detail::ScratchDir scratch("kj-translator-");
    nlohmann::json conversation = nlohmann::json::array();
    int turn = 0;
    for (const auto& message : messages) {
      conversation.push_back({{"role", message.role}, {"content", message.content}});
      if (message.role == "user") ++turn;
    }
    detail::write_file(scratch.path() / "prompt.txt",
                       messages.empty() ? std::string() : messages.back().content);
    detail::write_file(scratch.path() / "messages.json", conversation.dump());
    ChildProcess child(command_, scratch.path() / "prompt.txt", scratch.path() / "reply.txt",
                       {"KJ_TRANSLATOR_TURN=" + std::to_string(turn),
                        "KJ_TRANSLATOR_MESSAGES=" + (scratch.path() / "messages.json").string()});
    const auto status = child.wait(timeout_);
    if (!status) {
      throw TranslatorError("the translator command ran past " + std::to_string(timeout_.count()) +
                            " s");
    }
    if (*status != 0) {
      throw TranslatorError("the translator command exited with status " + std::to_string(*status));
    }
    return {detail::read_file(scratch.path() / "reply.txt"), "", "stop"};
  }

 private:
  std::string command_;
  std::chrono::seconds timeout_;
};

bool defines(const std::string& code, std::string_view name) {
  const std::regex pattern("(^|\\n)(def|class)\\s+" + std::string(name) + "\\b", kLinearRegex);
  return std::regex_search(code, pattern);
}

}  // namespace

std::unique_ptr<Translator> make_chat_translator(const ChatEndpoint& endpoint) {
  return std::make_unique<ChatTranslator>(endpoint);
}

std::unique_ptr<Translator> make_command_translator(std::string command,
                                                    std::chrono::seconds timeout) {
  return std::make_unique<CommandTranslator>(std::move(command), timeout);
}

std::optional<Translation> extract_translation(std::string_view reply, std::string_view expected) {
  const std::string text(reply);
  std::vector<std::string> blocks;
  // A model's reply is untrusted text: a code block of 100,000 characters overflowed the stack
  // of libstdc++'s default executor (`[\s\S]*?` recursed per character).
  static const std::regex fence(R"(```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n([\s\S]*?)```)", kLinearRegex);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), fence);
       it != std::sregex_iterator(); ++it) {
    const std::string language = (*it)[1].str();
    if (language.empty() || language == "python" || language == "py") {
      blocks.push_back((*it)[2].str());
    }
  }
  std::string code;
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    if (it->find("triton") != std::string::npos) {
      code = *it;
      break;
    }
  }
  if (code.empty() && !blocks.empty()) code = blocks.back();
  if (code.empty() && blocks.empty() && text.find("```") == std::string::npos &&
      (text.find("\ndef ") != std::string::npos || text.rfind("def ", 0) == 0 ||
       text.find("import ") != std::string::npos)) {
    code = text;
  }
  if (code.empty()) return std::nullopt;
  Translation translation{code, ""};
  if (!expected.empty() && defines(code, expected)) {
    translation.entrypoint = std::string(expected);
    return translation;
  }
  // The last top-level def/class that is not a @triton.jit kernel.
  static const std::regex top_level(R"((^|\n)((?:@[^\n]*\n)*)(def|class)\s+([A-Za-z_]\w*))",
                                    kLinearRegex);
  for (auto it = std::sregex_iterator(code.begin(), code.end(), top_level);
       it != std::sregex_iterator(); ++it) {
    if ((*it)[2].str().find("triton.jit") != std::string::npos) continue;
    if ((*it)[2].str().find("triton.autotune") != std::string::npos) continue;
    translation.entrypoint = (*it)[4].str();
  }
  if (translation.entrypoint.empty()) return std::nullopt;
  return translation;
}

}  // namespace kj::bootstrap
