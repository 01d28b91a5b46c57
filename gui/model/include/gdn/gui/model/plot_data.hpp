// What a plot shows, independent of how it is drawn: the model fills these, gui/src/plot_draw
// renders them with ImDrawList. Kept free of ImGui so plot content is unit-tested.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gdn/gui/model/stats.hpp"

namespace gdn::gui::model {

// One named set of points; label[i] is the hover text of point i (may be empty).
struct XYSeries {
  std::string name;
  std::vector<double> x, y;
  std::vector<std::string> labels;
  bool connect = false;  // draw as a line (timelines, best-per-value) instead of bare points
  std::uint32_t rgb = 0;  // 0xRRGGBB when the colour carries meaning (compare classes); 0: palette
  void add(double px, double py, std::string label = {}) {
    x.push_back(px);
    y.push_back(py);
    labels.push_back(std::move(label));
  }
  std::size_t size() const { return x.size(); }
};

// A scatter or line plot. When x_categories is not empty the x values are indices into it
// (a config field such as block_v plotted as categories, not as a continuous axis).
struct XYPlot {
  std::string title, x_label, y_label;
  std::vector<XYSeries> series;
  std::vector<std::string> x_categories;
  bool empty() const {
    for (const auto& s : series)
      if (s.size() > 0) return false;
    return true;
  }
};

// A grid of values over two categorical fields; cells are row-major (y major), NaN = no data.
struct HeatmapGrid {
  std::string title, x_label, y_label, value_label;
  std::vector<std::string> x_labels, y_labels;
  std::vector<double> cells;
  std::vector<std::string> cell_notes;  // hover text per cell (which config won the cell)
  double lo = 0, hi = 1;                // finite min/max over the cells
  double at(std::size_t xi, std::size_t yi) const { return cells[yi * x_labels.size() + xi]; }
  bool empty() const { return x_labels.empty() || y_labels.empty(); }
};

// A sample distribution with its p20/p50/p80 markers.
struct Distribution {
  std::string title, x_label;
  Histogram histogram;
  Quantiles marks;
  std::size_t sample_count = 0;
};

}  // namespace gdn::gui::model
