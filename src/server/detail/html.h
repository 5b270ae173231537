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

inline std::string format_number(const char* format, double value) {
  char text[48];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

}  // namespace kj::server::detail
