#include "markup/markup.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kj::markup {
namespace {

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

std::string text_element(double x, double y, const char* anchor, std::string_view text) {
  return "<text x=\"" + number(x) + "\" y=\"" + number(y) + "\" text-anchor=\"" + anchor + "\">" +
         escape_html(text) + "</text>\n";
}

// Where values land on the score axis: linear, or log10 when the scores span orders of
// magnitude (as a kernel improves); never a zero-height range.
struct ScoreAxis {
  bool log = false;
  double low = 0, high = 0;  // in axis units

  ScoreAxis(double lowest, double highest) : log(lowest > 0 && highest / lowest > 10) {
    low = unit(lowest);
    high = unit(highest);
    if (high - low < 1e-12) {
      low -= log ? 0.5 : std::max(1e-12, std::abs(low) * 0.1);
      high += log ? 0.5 : std::max(1e-12, std::abs(high) * 0.1);
    }
  }
  double unit(double value) const { return log ? std::log10(value) : value; }
  double value(double in_units) const { return log ? std::pow(10.0, in_units) : in_units; }
};

}  // namespace

std::string escape_html(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '\0':
        out += "&#65533;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string score_chart_svg(const ScoreChart& chart) {
  const double width = chart.width, height = chart.height;
  const double left = 80, right = 20, top = chart.title.empty() ? 15 : 40, bottom = 40;
  std::string svg = "<svg";
  if (!chart.css_class.empty()) svg += " class=\"" + escape_html(chart.css_class) + "\"";
  svg += " xmlns=\"http://www.w3.org/2000/svg\" width=\"" + number(width) + "\" height=\"" +
         number(height) + "\" viewBox=\"0 0 " + number(width) + " " + number(height) +
         "\" role=\"img\" aria-label=\"" +
         escape_html(chart.title.empty() ? "best score over time" : chart.title) + "\">\n" +
         "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n" +
         "<g font-family=\"sans-serif\" font-size=\"12\">\n";
  if (!chart.title.empty()) {
    svg += "<text x=\"" + number(width / 2) +
           "\" y=\"24\" text-anchor=\"middle\" font-size=\"16\">" + escape_html(chart.title) +
           "</text>\n";
  }
  const auto& points = chart.points;
  if (points.empty()) {
    return svg + text_element(width / 2, height / 2, "middle", "no scored submission") +
           "</g>\n</svg>\n";
  }
  const auto [lowest, highest] = std::minmax_element(
      points.begin(), points.end(), [](const auto& a, const auto& b) { return a.score < b.score; });
  const ScoreAxis axis(lowest->score, highest->score);
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  const double t0 = points.front().time, t1 = points.back().time;
  auto x_of = [&](double t) { return left + (t1 > t0 ? (t - t0) / (t1 - t0) : 0.5) * plot_w; };
  auto y_of = [&](double score) {
    return top + (axis.high - axis.unit(score)) / (axis.high - axis.low) * plot_h;
  };

  svg += "<line x1=\"" + number(left) + "\" y1=\"" + number(top + plot_h) + "\" x2=\"" +
         number(left + plot_w) + "\" y2=\"" + number(top + plot_h) + "\" stroke=\"#5f6b7a\"/>\n" +
         "<line x1=\"" + number(left) + "\" y1=\"" + number(top) + "\" x2=\"" + number(left) +
         "\" y2=\"" + number(top + plot_h) + "\" stroke=\"#5f6b7a\"/>\n";
  for (int i = 0; i <= 4; ++i) {
    const double in_units = axis.low + (axis.high - axis.low) * i / 4.0;
    svg += text_element(left - 6, y_of(axis.value(in_units)) + 4, "end",
                        chart.score_label(axis.value(in_units)));
  }
  svg += text_element(left, height - 12, "start", chart.time_label(t0));
  if (points.size() > 1)
    svg += text_element(left + plot_w, height - 12, "end", chart.time_label(t1));
  svg += "</g>\n<polyline fill=\"none\" stroke=\"#1a73e8\" stroke-width=\"2\" points=\"";
  double best = points.front().score;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const double x = x_of(points[i].time);
    if (i > 0) svg += " " + number(x) + "," + number(y_of(best)) + " ";
    best = std::min(best, points[i].score);
    svg += number(x) + "," + number(y_of(best));
  }
  svg += "\"/>\n";
  for (const auto& p : points) {
    svg += "<circle class=\"score\" cx=\"" + number(x_of(p.time)) + "\" cy=\"" +
           number(y_of(p.score)) + "\" r=\"3\" fill=\"#d62728\"><title>" + escape_html(p.tooltip) +
           "</title></circle>\n";
  }
  return svg + "</svg>\n";
}

}  // namespace kj::markup
