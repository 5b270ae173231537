#include "server/detail/requests.h"

#include <charconv>

namespace kj::server::detail {

using nlohmann::json;

json parse_json_body(const httplib::Request& req) {
  if (req.body.empty()) return json::object();
  try {
    json body = json::parse(req.body);
    if (!body.is_object())
      throw ApiError(400, "invalid_json", "the request body must be a JSON object");
    return body;
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e999
    throw ApiError(400, "invalid_json", std::string("the request body is not JSON: ") + e.what());
  }
}

std::string string_field(const json& body, const std::string& key) {
  const auto it = body.find(key);
  if (it == body.end() || it->is_null()) return "";
  if (!it->is_string()) throw ApiError(400, "invalid_field", "'" + key + "' must be a string");
  return it->get<std::string>();
}

bool bool_field(const json& body, const std::string& key, bool absent) {
  const auto it = body.find(key);
  if (it == body.end() || it->is_null()) return absent;
  if (!it->is_boolean())
    throw ApiError(400, "invalid_field", "'" + key + "' must be true or false");
  return it->get<bool>();
}

SubmissionRequest api_submission_request(const httplib::Request& req) {
  SubmissionRequest r;
  if (req.is_multipart_form_data()) {
    if (req.has_file("file")) {
      const auto file = req.get_file_value("file");
      r.code = file.content;
      r.file_name = file.filename;
      r.has_code = true;
    }
    auto field = [&](const char* key) {
      return req.has_file(key) ? req.get_file_value(key).content : std::string();
    };
    r.leaderboard = field("leaderboard");
    r.gpu = field("gpu");
    r.mode = field("mode");
    if (r.file_name.empty()) r.file_name = field("file_name");
  } else {
    const json body = parse_json_body(req);
    r.leaderboard = string_field(body, "leaderboard");
    r.gpu = string_field(body, "gpu");
    r.mode = string_field(body, "mode");
    r.file_name = string_field(body, "file_name");
    r.has_code = body.contains("code") && !body["code"].is_null();
    r.code = string_field(body, "code");
  }
  return r;
}

namespace {

// A whole decimal number, digits only, that fits.
bool whole_number(std::string_view text, std::int64_t& out) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

EventPosition parse_last_event_id(std::string_view header) {
  const auto dot = header.find('.');
  if (dot == std::string_view::npos) return {};
  EventPosition position;
  if (!whole_number(header.substr(0, dot), position.job) ||
      !whole_number(header.substr(dot + 1), position.seq)) {
    return {};
  }
  return position;
}

}  // namespace kj::server::detail
