// A progress bar on stderr for long exports and imports: drawn only when asked (a TTY or
// --progress), redrawn at most every 100 ms, erased at the end.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace kj::data::detail {

class ProgressBar {
 public:
  ProgressBar(bool enabled, std::string label, std::int64_t total);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  void advance(std::int64_t n = 1);

 private:
  void draw();
  bool enabled_;
  std::string label_;
  std::int64_t total_;
  std::int64_t done_ = 0;
  std::chrono::steady_clock::time_point last_draw_{};
};

// --progress, or stderr is a terminal.
bool want_progress(bool forced);

}  // namespace kj::data::detail
