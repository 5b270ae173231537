// Small pieces for the server's HTML pages: escaping text for HTML (markup/), encoding URL path
// segments and query values, and formatting times and durations for people.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

#include "markup/markup.h"

namespace kj::server::detail {

// Text safe inside an element or a quoted attribute: user names, file names, logs, reasons.
using markup::escape_html;

// One path segment or query value, percent-encoded (everything but unreserved characters).
inline std::string encode_url_component(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte >= 'A' && byte <= 'Z') || (byte >= 'a' && byte <= 'z') ||
        (byte >= '0' && byte <= '9') || c == '-' || c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    }
  }
  return out;
}

// Seconds as people read kernel times: "812 ns", "37.4 µs", "1.25 ms", "2.10 s".
inline std::string format_seconds(double seconds) {
  if (!std::isfinite(seconds)) return "–";
  char text[48];
  const double magnitude = std::fabs(seconds);
  if (magnitude < 1e-6) {
    std::snprintf(text, sizeof text, "%.0f ns", seconds * 1e9);
  } else if (magnitude < 1e-3) {
    std::snprintf(text, sizeof text, "%.3g µs", seconds * 1e6);
  } else if (magnitude < 1) {
    std::snprintf(text, sizeof text, "%.3g ms", seconds * 1e3);
  } else {
    std::snprintf(text, sizeof text, "%.3g s", seconds);
  }
  return text;
}

inline std::string format_number(const char* format, double value) {
  char text[48];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

}  // namespace kj::server::detail
