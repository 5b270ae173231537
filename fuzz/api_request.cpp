// API requests: the fuzzer's bytes as an HTTP request read by cpp-httplib as `kj serve` reads it
// (headers, chunked bodies, multipart/form-data), routed to what the API reads from it: the body
// of POST /api/submissions (JSON or multipart, and the #!POPCORN directives of its code), the
// fields of the admin bodies (a deadline), and an event stream's Last-Event-ID. ApiError is the
// documented outcome of a malformed request; any other exception in a handler is a finding.
//
// The first byte picks how the rest is sent: 0 a JSON body, 1 a multipart body (boundary
// "kjfuzz"), 2 a Last-Event-ID header value, else the whole input as the raw request.
#include <httplib.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "fuzz/fuzz_files.h"
#include "problem/problem.h"
#include "server/detail/requests.h"
#include "server/server.h"

namespace {

// The request's bytes in, the response's bytes dropped.
class BufferStream final : public httplib::Stream {
 public:
  explicit BufferStream(std::string_view in) : in_(in) {}
  bool is_readable() const override { return true; }
  bool wait_readable() const override { return true; }
  bool wait_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    const std::size_t n = std::min(size, in_.size() - offset_);
    std::copy_n(in_.data() + offset_, n, ptr);
    offset_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char*, size_t size) override { return static_cast<ssize_t>(size); }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 40000;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 8080;
  }
  socket_t socket() const override { return INVALID_SOCKET; }
  time_t duration() const override { return 0; }

 private:
  std::string_view in_;
  std::size_t offset_ = 0;
};

// Runs a handler's reading; ApiError becomes the response, as the API's handlers do.
template <typename Read>
void api(httplib::Response& res, Read read) {
  try {
    read();
    res.status = 200;
  } catch (const kj::server::detail::ApiError& e) {
    res.status = e.status;
  }
}

class FuzzedServer : public httplib::Server {
 public:
  FuzzedServer() {
    Post("/api/submissions", [](const httplib::Request& req, httplib::Response& res) {
      api(res, [&] {
        const auto r = kj::server::detail::api_submission_request(req);
        (void)kj::problem::parse_directives(r.code);
      });
    });
    Post("/api/admin/leaderboards/x/deadline",
         [](const httplib::Request& req, httplib::Response& res) {
           api(res, [&] {
             const auto body = kj::server::detail::parse_json_body(req);
             (void)kj::server::parse_time(kj::server::detail::string_field(body, "deadline"));
             (void)kj::server::detail::bool_field(body, "hacked", true);
           });
         });
    Get(R"(/api/submissions/(\d+)/events)", [](const httplib::Request& req, httplib::Response&) {
      (void)kj::server::detail::parse_last_event_id(req.get_header_value("Last-Event-ID"));
    });
    set_exception_handler(
        [](const httplib::Request& req, httplib::Response&, std::exception_ptr e) {
          try {
            std::rethrow_exception(e);
          } catch (const std::exception& error) {
            std::fprintf(stderr, "%s %s: uncaught %s\n", req.method.c_str(), req.path.c_str(),
                         error.what());
          }
          std::abort();
        });
  }
  void serve(std::string_view request) {
    BufferStream stream(request);
    bool closed = false;
    process_request(stream, "127.0.0.1", 40000, "127.0.0.1", 8080, true, closed, nullptr);
  }
};

std::string wrapped(std::uint8_t how, std::string_view rest) {
  const std::string length = "Content-Length: " + std::to_string(rest.size()) + "\r\n\r\n";
  switch (how) {
    case 0:
      return "POST /api/submissions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
             length + std::string(rest);
    case 1:
      return "POST /api/submissions HTTP/1.1\r\nHost: x\r\n"
             "Content-Type: multipart/form-data; boundary=kjfuzz\r\n" +
             length + std::string(rest);
    case 2:
      return "GET /api/submissions/1/events HTTP/1.1\r\nHost: x\r\nLast-Event-ID: " +
             std::string(rest) + "\r\n\r\n";
    default:
      return std::string(rest);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static FuzzedServer server;
  if (size == 0) return 0;
  const std::string_view text = kj::fuzz::as_text(data, size);
  server.serve(data[0] <= 2 ? wrapped(data[0], text.substr(1)) : wrapped(3, text));
  return 0;
}
