#include "datasets/detail/progress.h"

#include <unistd.h>

#include <cstdio>

namespace kj::data::detail {

bool want_progress(bool forced) { return forced || isatty(STDERR_FILENO) == 1; }

ProgressBar::ProgressBar(bool enabled, std::string label, std::int64_t total)
    : enabled_(enabled), label_(std::move(label)), total_(total) {
  if (enabled_) draw();
}

ProgressBar::~ProgressBar() {
  if (!enabled_) return;
  done_ = total_;
  draw();
  std::fputc('\n', stderr);
}

void ProgressBar::advance(std::int64_t n) {
  done_ += n;
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ >= std::chrono::milliseconds(100)) draw();
}

void ProgressBar::draw() {
  last_draw_ = std::chrono::steady_clock::now();
  constexpr int kWidth = 30;
  const double fraction =
      total_ > 0 ? static_cast<double>(done_) / static_cast<double>(total_) : 1.0;
  const int filled = static_cast<int>(fraction * kWidth);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(kWidth, ' ');
  std::fprintf(stderr, "\r%s [%s] %3d%% %lld/%lld", label_.c_str(), bar.c_str(),
               static_cast<int>(fraction * 100), static_cast<long long>(done_),
               static_cast<long long>(total_));
  std::fflush(stderr);
}

}  // namespace kj::data::detail
