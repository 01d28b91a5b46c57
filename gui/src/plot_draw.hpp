// A small plotting module drawn with ImDrawList (Debian 12 ships no ImPlot): axes with ticks,
// scatter/line plots, heatmaps with a colour scale, histograms with p20/p50/p80 markers, and
// hover tooltips. Each call draws into the current window, occupying `size` pixels (a
// non-positive component means "fill the available space" on that axis).
#pragma once

#include <imgui.h>

#include "gdn/gui/model/plot_data.hpp"

namespace gdn::gui::draw {

void xy_plot(const char* id, const model::XYPlot& plot, ImVec2 size);
void heatmap(const char* id, const model::HeatmapGrid& grid, ImVec2 size);
void distribution(const char* id, const model::Distribution& dist, ImVec2 size);

// Series colours, stable per index so a series keeps its colour across plots.
ImU32 series_color(std::size_t index, int alpha = 255);
// Maps t in [0, 1] onto a perceptually ordered scale (dark blue -> green -> yellow).
ImU32 scale_color(double t);

}  // namespace gdn::gui::draw
