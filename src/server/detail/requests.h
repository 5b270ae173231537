// What the API reads out of a request before any rule applies: JSON bodies and their fields, a
// submission sent as JSON or as multipart/form-data, and the SSE Last-Event-ID header. Every
// malformed request is an ApiError (a status and a stable code), never another exception.
#pragma once

#include <httplib.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

#include "store/store.h"

namespace kj::server::detail {

// A request refused: the HTTP status and a stable code for programs, a message for people.
struct ApiError : std::runtime_error {
  ApiError(int status_code, std::string error_code, const std::string& message)
      : std::runtime_error(message), status(status_code), code(std::move(error_code)) {}
  int status;
  std::string code;
};

// The body as a JSON object; an empty body is an empty object.
nlohmann::json parse_json_body(const httplib::Request& req);

// body[key] as a string ("" when absent or null); ApiError when it is another type.
std::string string_field(const nlohmann::json& body, const std::string& key);
// body[key] as a bool (`absent` when absent or null); ApiError when it is another type.
bool bool_field(const nlohmann::json& body, const std::string& key, bool absent);

// What a client asked to submit, before the server's rules filled in the rest.
struct SubmissionRequest {
  std::string leaderboard, gpu, mode, file_name, code;
  bool has_code = false;
};

// POST /api/submissions: a JSON object {leaderboard, gpu, mode, file_name, code}, or
// multipart/form-data with a `file` part and the same names as parts.
SubmissionRequest api_submission_request(const httplib::Request& req);

// Where an event stream resumes: after event `seq` of job `job` ({0, 0}: from the start).
struct EventPosition {
  store::Id job = 0;
  std::int64_t seq = 0;
};

// The Last-Event-ID header of a reconnecting SSE client ("JOB.SEQ", the ids the stream sends);
// anything else, empty included, resumes from the start.
EventPosition parse_last_event_id(std::string_view header);

}  // namespace kj::server::detail
