// Cutting text for reports without splitting a UTF-8 character. Internal to src/judge.
#pragma once

#include <string>
#include <string_view>

namespace kj::judge::detail {

// At most `max` bytes of `text`, ending before a character that would not fit whole, with "…"
// after it when something was cut.
inline std::string cut(std::string_view text, std::size_t max) {
  if (text.size() <= max) return std::string(text);
  std::size_t end = max;
  // Back to the first byte of the character at `end` (continuation bytes are 10xxxxxx).
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(0, end)) + "…";
}

}  // namespace kj::judge::detail
