#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "bench/stats.h"

using kj::bench::aggregate;
using kj::bench::summarize;

TEST(Summary, MedianAndQuartilesOfOddAndEvenCounts) {
  std::vector<double> odd = {5, 1, 3, 2, 4};
  auto s = summarize(odd);
  EXPECT_EQ(s.n, 5u);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.q1, 2);
  EXPECT_DOUBLE_EQ(s.q3, 4);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_NEAR(s.stdev, 1.5811388, 1e-6);
  std::vector<double> even = {10, 20, 30, 40};
  EXPECT_DOUBLE_EQ(summarize(even).median, 25);
}

TEST(Summary, OutlierMovesMeanNotMedian) {
  std::vector<double> samples(99, 100.0);
  samples.push_back(1e6);
  auto s = summarize(samples);
  EXPECT_DOUBLE_EQ(s.median, 100);
  EXPECT_GT(s.mean, 10000);
}

TEST(Summary, EmptyInputIsZero) {
  EXPECT_EQ(summarize({}).n, 0u);
}

TEST(Aggregate, RankingMethods) {
  std::vector<double> v = {1, 4, 16};
  EXPECT_DOUBLE_EQ(aggregate(v, "last"), 16);
  EXPECT_DOUBLE_EQ(aggregate(v, "mean"), 7);
  EXPECT_NEAR(aggregate(v, "geom"), 4, 1e-12);
  EXPECT_THROW(aggregate(v, "max"), std::invalid_argument);
  std::vector<double> zero = {0, 1};
  EXPECT_THROW(aggregate(zero, "geom"), std::invalid_argument);
}

TEST(Format, Units) {
  EXPECT_EQ(kj::bench::format_ns(850), "850 ns");
  EXPECT_EQ(kj::bench::format_ns(12345), "12.3 µs");
  EXPECT_EQ(kj::bench::format_ns(1.05e6), "1.05 ms");
}
