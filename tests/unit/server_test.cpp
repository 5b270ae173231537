// What the server reads out of requests before its rules apply (src/server/detail/requests.h)
// and its time format: malformed input is an ApiError (a 4xx with a stable code) or no value,
// never another exception (which the API answers with a 500).
#include "server/server.h"

#include <gtest/gtest.h>

#include "server/detail/requests.h"

using kj::server::detail::ApiError;
using kj::server::detail::parse_last_event_id;

namespace {

// The ApiError `read` throws; fails the test when it throws nothing.
template <typename Read>
ApiError api_error(Read read) {
  try {
    read();
  } catch (const ApiError& e) {
    return e;
  }
  ADD_FAILURE() << "no ApiError";
  return ApiError(0, "", "");
}

httplib::Request json_request(const std::string& body) {
  httplib::Request req;
  req.body = body;
  req.set_header("Content-Type", "application/json");
  return req;
}

}  // namespace

TEST(LastEventId, ResumesAfterTheEventItNames) {
  const auto position = parse_last_event_id("12.34");
  EXPECT_EQ(position.job, 12);
  EXPECT_EQ(position.seq, 34);
}

TEST(LastEventId, AnythingElseResumesFromTheStart) {
  for (const char* header :
       {"", "12", "12.", ".34", "-1.5", "1.-5", "+1.5", " 1.5", "1.5 ", "1.5x", "1.2.3", "0x10.1",
        "99999999999999999999.1", "1.99999999999999999999"}) {
    const auto position = parse_last_event_id(header);
    EXPECT_EQ(position.job, 0) << header;
    EXPECT_EQ(position.seq, 0) << header;
  }
}

TEST(RequestBody, MalformedJsonIsA400) {
  // A number too large for a double threw json's out_of_range, not a parse_error, and was answered
  // 500 (found by fuzzing the API, fuzz/api_request.cpp).
  for (const char* body : {"{not json", "[1, 2]", "\"text\"", "{\"a\": 1", "\xff",
                           R"({"leaderboard": 55555555555e500000000000000000074602})", "1e999"}) {
    const auto error = api_error([&] { kj::server::detail::parse_json_body(json_request(body)); });
    EXPECT_EQ(error.status, 400) << body;
    EXPECT_EQ(error.code, "invalid_json") << body;
  }
}

TEST(RequestBody, AFieldOfTheWrongTypeIsA400) {
  const auto body = nlohmann::json::parse(R"({"hacked": "no", "leaderboard": 7})");
  auto error = api_error([&] { kj::server::detail::bool_field(body, "hacked", true); });
  EXPECT_EQ(error.status, 400);
  EXPECT_EQ(error.code, "invalid_field");
  error = api_error([&] { kj::server::detail::string_field(body, "leaderboard"); });
  EXPECT_EQ(error.code, "invalid_field");
  EXPECT_TRUE(kj::server::detail::bool_field(nlohmann::json::object(), "hacked", true));
  EXPECT_FALSE(kj::server::detail::bool_field(nlohmann::json::parse(R"({"hacked": false})"),
                                              "hacked", true));
}

TEST(SubmissionRequest, JsonBody) {
  const auto r = kj::server::detail::api_submission_request(json_request(
      R"({"leaderboard": "vectoradd", "gpu": "H100", "mode": "test", "code": "x = 1\n"})"));
  EXPECT_EQ(r.leaderboard, "vectoradd");
  EXPECT_EQ(r.gpu, "H100");
  EXPECT_EQ(r.mode, "test");
  EXPECT_TRUE(r.has_code);
  EXPECT_EQ(r.code, "x = 1\n");
  const auto error = api_error(
      [&] { kj::server::detail::api_submission_request(json_request(R"({"code": [1]})")); });
  EXPECT_EQ(error.code, "invalid_field");
}

TEST(SubmissionRequest, MultipartBody) {
  httplib::Request req;
  req.set_header("Content-Type", "multipart/form-data; boundary=b");
  req.files.emplace("file", httplib::MultipartFormData{"file", "x = 1\n", "mine.py", "", {}});
  req.files.emplace("mode", httplib::MultipartFormData{"mode", "benchmark", "", "", {}});
  const auto r = kj::server::detail::api_submission_request(req);
  EXPECT_TRUE(r.has_code);
  EXPECT_EQ(r.code, "x = 1\n");
  EXPECT_EQ(r.file_name, "mine.py");
  EXPECT_EQ(r.mode, "benchmark");
  EXPECT_EQ(r.leaderboard, "");
}

TEST(ParseTime, Iso8601InUtc) {
  const auto time = kj::server::parse_time("2026-03-01T12:00:00.5Z");
  ASSERT_TRUE(time);
  EXPECT_EQ(kj::server::format_time(*time), "2026-03-01T12:00:00Z");
  for (const char* text : {"2026-03-01T-1:00:00Z", "2026-03-01T12:-5:00Z", "2026-03-01T12:00:-1Z",
                           "2026-02-30T12:00:00Z", "2026-03-01T24:00:00Z", "2026-03-01 12:00:00",
                           "2026-03-01T12:00:00+02:00", ""}) {
    EXPECT_FALSE(kj::server::parse_time(text)) << text;
  }
}
