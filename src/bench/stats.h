// Statistics over timing samples: the summary every benchmark reports, and ranking aggregates.
#pragma once

#include <span>
#include <string>
#include <vector>

namespace kj::bench {

struct Summary {
  std::size_t n = 0;
  double median = 0;  // primary figure (ns)
  double q1 = 0;      // 25th percentile
  double q3 = 0;      // 75th percentile
  double mean = 0;
  double stdev = 0;  // sample standard deviation (n-1)
  double min = 0;
  double max = 0;
  double iqr() const { return q3 - q1; }
};

// Linear-interpolated quantile of sorted values, q in [0, 1].
double quantile_sorted(std::span<const double> sorted, double q);

// Summary of the samples; an empty input gives n == 0 and zeros.
Summary summarize(std::span<const double> samples);

// Aggregates per-benchmark figures as task.yml's ranking_by says: "last", "mean" or "geom".
// Throws std::invalid_argument for an unknown method or a non-positive value under "geom".
double aggregate(std::span<const double> values, const std::string& method);

// "12.3 µs", "1.05 ms", "850 ns": a duration in nanoseconds for people.
std::string format_ns(double ns);

}  // namespace kj::bench
