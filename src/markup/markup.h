// Markup both the server's pages and the analysis commands write: escaping text for HTML and
// XML, and the one chart they draw (scores over time with the best so far) as SVG.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kj::markup {

// Text safe inside an element or a quoted attribute, in HTML and in XML (SVG): user names, file
// names, logs, reasons, chart titles.
std::string escape_html(std::string_view text);

struct ScorePoint {
  double time = 0;      // seconds, any origin; points come in time order
  double score = 0;     // lower is better
  std::string tooltip;  // the dot's <title>
};

struct ScoreChart {
  std::vector<ScorePoint> points;
  std::string title;      // drawn above the plot when not empty
  std::string css_class;  // the <svg>'s class attribute when not empty
  double width = 720;
  double height = 400;
  std::function<std::string(double score)> score_label;  // the axis's values
  std::function<std::string(double time)> time_label;    // the first and last points' times
};

// Each score as a dot (class "score") and the best score so far as a step line, over time; the
// score axis is logarithmic when the scores span more than a factor of 10. A standalone SVG
// document, also valid inline in HTML; "no scored submission" when there are no points.
std::string score_chart_svg(const ScoreChart& chart);

}  // namespace kj::markup
