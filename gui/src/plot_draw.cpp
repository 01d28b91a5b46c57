#include "plot_draw.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>

namespace gdn::gui::draw {
namespace {

constexpr float kLeftMargin = 62, kBottomMargin = 38, kTopMargin = 24, kRightMargin = 14;
constexpr float kHoverRadius = 6;

std::string format_tick(double v) {
  char buf[32];
  const double a = std::abs(v);
  if (a != 0 && (a >= 1e5 || a < 1e-3))
    std::snprintf(buf, sizeof buf, "%.2g", v);
  else
    std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// Maps data coordinates onto the pixel rectangle of the plot area (y grows upwards).
struct Frame {
  ImVec2 min, max;
  model::Range x, y;
  ImVec2 to_screen(double vx, double vy) const {
    const double tx = (vx - x.lo) / (x.hi - x.lo);
    const double ty = (vy - y.lo) / (y.hi - y.lo);
    return {min.x + float(tx) * (max.x - min.x), max.y - float(ty) * (max.y - min.y)};
  }
};

ImVec2 resolve_size(ImVec2 size) {
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  return {size.x > 0 ? size.x : std::max(avail.x, 100.0f),
          size.y > 0 ? size.y : std::max(avail.y, 80.0f)};
}

// Reserves the widget rectangle and returns it; hovered tells whether the mouse is over it.
struct Canvas {
  ImVec2 min, max;
  bool hovered;
  ImDrawList* dl;
};
Canvas begin_canvas(const char* id, ImVec2 size) {
  size = resolve_size(size);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton(id, size);
  Canvas c{origin, {origin.x + size.x, origin.y + size.y}, ImGui::IsItemHovered(),
           ImGui::GetWindowDrawList()};
  c.dl->AddRectFilled(c.min, c.max, ImGui::GetColorU32(ImGuiCol_FrameBg));
  return c;
}

void draw_title(const Canvas& c, const std::string& title) {
  if (!title.empty())
    c.dl->AddText({c.min.x + kLeftMargin, c.min.y + 4}, ImGui::GetColorU32(ImGuiCol_Text),
                  title.c_str());
}

// Axes with numeric ticks (or category labels on x when given) and axis labels.
void draw_axes(const Canvas& c, const Frame& f, const std::string& x_label,
               const std::string& y_label, const std::vector<std::string>& x_categories) {
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const ImU32 grid = ImGui::GetColorU32(ImGuiCol_Border, 0.35f);
  c.dl->AddRect(f.min, f.max, ImGui::GetColorU32(ImGuiCol_Border));
  if (!x_categories.empty()) {
    for (std::size_t i = 0; i < x_categories.size(); ++i) {
      const ImVec2 p = f.to_screen(double(i), f.y.lo);
      const ImVec2 ts = ImGui::CalcTextSize(x_categories[i].c_str());
      c.dl->AddLine({p.x, f.min.y}, {p.x, f.max.y}, grid);
      c.dl->AddText({p.x - ts.x / 2, f.max.y + 3}, text, x_categories[i].c_str());
    }
  } else {
    for (double t : model::nice_ticks(f.x.lo, f.x.hi, 6)) {
      const ImVec2 p = f.to_screen(t, f.y.lo);
      const std::string s = format_tick(t);
      const ImVec2 ts = ImGui::CalcTextSize(s.c_str());
      c.dl->AddLine({p.x, f.min.y}, {p.x, f.max.y}, grid);
      c.dl->AddText({p.x - ts.x / 2, f.max.y + 3}, text, s.c_str());
    }
  }
  for (double t : model::nice_ticks(f.y.lo, f.y.hi, 5)) {
    const ImVec2 p = f.to_screen(f.x.lo, t);
    const std::string s = format_tick(t);
    const ImVec2 ts = ImGui::CalcTextSize(s.c_str());
    c.dl->AddLine({f.min.x, p.y}, {f.max.x, p.y}, grid);
    c.dl->AddText({f.min.x - ts.x - 4, p.y - ts.y / 2}, text, s.c_str());
  }
  const ImVec2 xs = ImGui::CalcTextSize(x_label.c_str());
  c.dl->AddText({(f.min.x + f.max.x - xs.x) / 2, c.max.y - xs.y - 2}, text, x_label.c_str());
  c.dl->AddText({c.min.x + 4, c.min.y + 4}, text, y_label.c_str());
}

Frame plot_frame(const Canvas& c, model::Range x, model::Range y) {
  return {{c.min.x + kLeftMargin, c.min.y + kTopMargin},
          {c.max.x - kRightMargin, c.max.y - kBottomMargin}, x, y};
}

void draw_empty(const Canvas& c, const char* why) {
  const ImVec2 ts = ImGui::CalcTextSize(why);
  c.dl->AddText({(c.min.x + c.max.x - ts.x) / 2, (c.min.y + c.max.y - ts.y) / 2},
                ImGui::GetColorU32(ImGuiCol_TextDisabled), why);
}

}  // namespace

ImU32 series_color(std::size_t index, int alpha) {
  static constexpr std::array<ImU32, 8> rgb = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728,
                                               0x9467bd, 0x8c564b, 0xe377c2, 0x17becf};
  const ImU32 c = rgb[index % rgb.size()];
  return IM_COL32((c >> 16) & 0xff, (c >> 8) & 0xff, c & 0xff, alpha);
}

ImU32 scale_color(double t) {
  // Five stops of the viridis map; linear between them.
  static constexpr std::array<std::array<float, 3>, 5> stops = {
      {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}}};
  if (!std::isfinite(t)) t = 0;
  t = std::clamp(t, 0.0, 1.0) * double(stops.size() - 1);
  const auto i = std::min<std::size_t>(static_cast<std::size_t>(t), stops.size() - 2);
  const float w = float(t - double(i));
  auto mix = [&](int k) { return int(stops[i][k] + w * (stops[i + 1][k] - stops[i][k])); };
  return IM_COL32(mix(0), mix(1), mix(2), 255);
}

void xy_plot(const char* id, const model::XYPlot& plot, ImVec2 size) {
  const Canvas c = begin_canvas(id, size);
  draw_title(c, plot.title);
  if (plot.empty()) return draw_empty(c, "no data for this plot");

  std::vector<double> xs, ys;
  for (const auto& s : plot.series) {
    xs.insert(xs.end(), s.x.begin(), s.x.end());
    ys.insert(ys.end(), s.y.begin(), s.y.end());
  }
  model::Range xr = plot.x_categories.empty()
                        ? model::padded_range(xs)
                        : model::Range{-0.5, double(plot.x_categories.size()) - 0.5};
  const Frame f = plot_frame(c, xr, model::padded_range(ys));
  draw_axes(c, f, plot.x_label, plot.y_label, plot.x_categories);

  auto color_of = [&](std::size_t si, int alpha) {
    const std::uint32_t rgb = plot.series[si].rgb;
    return rgb == 0 ? series_color(si, alpha)
                    : IM_COL32((rgb >> 16) & 0xff, (rgb >> 8) & 0xff, rgb & 0xff, alpha);
  };
  c.dl->PushClipRect(f.min, f.max, true);
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const model::XYSeries* hover_series = nullptr;
  std::size_t hover_index = 0;
  float best = kHoverRadius * kHoverRadius;
  for (std::size_t si = 0; si < plot.series.size(); ++si) {
    const auto& s = plot.series[si];
    ImVec2 previous{};
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      const ImVec2 p = f.to_screen(s.x[i], s.y[i]);
      if (s.connect && i > 0) c.dl->AddLine(previous, p, color_of(si, 255), 1.5f);
      if (!s.connect || s.size() < 64) c.dl->AddCircleFilled(p, 3.0f, color_of(si, 200), 8);
      previous = p;
      const float dx = p.x - mouse.x, dy = p.y - mouse.y;
      if (c.hovered && dx * dx + dy * dy < best) {
        best = dx * dx + dy * dy;
        hover_series = &s;
        hover_index = i;
      }
    }
  }
  c.dl->PopClipRect();

  // Legend, top right, only when there is more than one series.
  if (plot.series.size() > 1) {
    float y = f.min.y + 4;
    for (std::size_t si = 0; si < plot.series.size(); ++si) {
      const char* name = plot.series[si].name.c_str();
      const ImVec2 ts = ImGui::CalcTextSize(name);
      const float x = f.max.x - ts.x - 18;
      c.dl->AddRectFilled({x, y + 3}, {x + 10, y + 13}, color_of(si, 255));
      c.dl->AddText({x + 14, y}, ImGui::GetColorU32(ImGuiCol_Text), name);
      y += ts.y + 2;
    }
  }
  if (hover_series) {
    const ImVec2 p = f.to_screen(hover_series->x[hover_index], hover_series->y[hover_index]);
    c.dl->AddCircle(p, 6.0f, ImGui::GetColorU32(ImGuiCol_Text));
    ImGui::BeginTooltip();
    if (!hover_series->name.empty()) ImGui::TextUnformatted(hover_series->name.c_str());
    const std::string& label = hover_series->labels[hover_index];
    if (!label.empty()) ImGui::TextUnformatted(label.c_str());
    const double hx = hover_series->x[hover_index];
    if (!plot.x_categories.empty() && hx >= 0 && hx < double(plot.x_categories.size()))
      ImGui::Text("%s = %s", plot.x_label.c_str(),
                  plot.x_categories[static_cast<std::size_t>(std::lround(hx))].c_str());
    else
      ImGui::Text("%s = %.4g", plot.x_label.c_str(), hx);
    ImGui::Text("%s = %.4g", plot.y_label.c_str(), hover_series->y[hover_index]);
    ImGui::EndTooltip();
  }
}

void heatmap(const char* id, const model::HeatmapGrid& grid, ImVec2 size) {
  const Canvas c = begin_canvas(id, size);
  draw_title(c, grid.title);
  if (grid.empty()) return draw_empty(c, "no data for this heatmap");
  constexpr float kScaleWidth = 70;
  const ImVec2 fmin{c.min.x + kLeftMargin, c.min.y + kTopMargin};
  const ImVec2 fmax{c.max.x - kRightMargin - kScaleWidth, c.max.y - kBottomMargin};
  const std::size_t nx = grid.x_labels.size(), ny = grid.y_labels.size();
  const float cw = (fmax.x - fmin.x) / float(nx), ch = (fmax.y - fmin.y) / float(ny);
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const double span = grid.hi > grid.lo ? grid.hi - grid.lo : 1.0;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  for (std::size_t yi = 0; yi < ny; ++yi) {
    for (std::size_t xi = 0; xi < nx; ++xi) {
      // Row 0 at the bottom, like a y axis.
      const ImVec2 a{fmin.x + cw * float(xi), fmax.y - ch * float(yi + 1)};
      const ImVec2 b{a.x + cw, a.y + ch};
      const double v = grid.at(xi, yi);
      if (std::isfinite(v)) {
        c.dl->AddRectFilled(a, b, scale_color((v - grid.lo) / span));
        if (cw > 48 && ch > 16) {
          char buf[32];
          std::snprintf(buf, sizeof buf, "%.4g", v);
          const ImVec2 ts = ImGui::CalcTextSize(buf);
          c.dl->AddText({(a.x + b.x - ts.x) / 2, (a.y + b.y - ts.y) / 2},
                        (v - grid.lo) / span > 0.6 ? IM_COL32(0, 0, 0, 255) : IM_COL32_WHITE, buf);
        }
      } else {
        c.dl->AddRect(a, b, dim);
      }
      if (c.hovered && mouse.x >= a.x && mouse.x < b.x && mouse.y >= a.y && mouse.y < b.y) {
        c.dl->AddRect(a, b, text, 0, 0, 2.0f);
        ImGui::BeginTooltip();
        ImGui::Text("%s = %s, %s = %s", grid.x_label.c_str(), grid.x_labels[xi].c_str(),
                    grid.y_label.c_str(), grid.y_labels[yi].c_str());
        if (std::isfinite(v))
          ImGui::Text("%s = %.4g", grid.value_label.c_str(), v);
        else
          ImGui::TextUnformatted("no passing result");
        const std::size_t k = yi * nx + xi;
        if (k < grid.cell_notes.size() && !grid.cell_notes[k].empty())
          ImGui::TextUnformatted(grid.cell_notes[k].c_str());
        ImGui::EndTooltip();
      }
    }
  }
  for (std::size_t xi = 0; xi < nx; ++xi) {
    const ImVec2 ts = ImGui::CalcTextSize(grid.x_labels[xi].c_str());
    c.dl->AddText({fmin.x + cw * (float(xi) + 0.5f) - ts.x / 2, fmax.y + 3}, dim,
                  grid.x_labels[xi].c_str());
  }
  for (std::size_t yi = 0; yi < ny; ++yi) {
    const ImVec2 ts = ImGui::CalcTextSize(grid.y_labels[yi].c_str());
    c.dl->AddText({fmin.x - ts.x - 4, fmax.y - ch * (float(yi) + 0.5f) - ts.y / 2}, dim,
                  grid.y_labels[yi].c_str());
  }
  const ImVec2 xs = ImGui::CalcTextSize(grid.x_label.c_str());
  c.dl->AddText({(fmin.x + fmax.x - xs.x) / 2, c.max.y - xs.y - 2}, dim, grid.x_label.c_str());
  c.dl->AddText({c.min.x + 4, c.min.y + 4}, dim, grid.y_label.c_str());

  // Colour scale with its low/high values.
  const float sx = fmax.x + 12;
  constexpr int kSteps = 32;
  const float step_h = (fmax.y - fmin.y) / kSteps;
  for (int i = 0; i < kSteps; ++i)
    c.dl->AddRectFilled({sx, fmax.y - step_h * float(i + 1)}, {sx + 14, fmax.y - step_h * float(i)},
                        scale_color((i + 0.5) / kSteps));
  c.dl->AddText({sx + 18, fmin.y}, dim, format_tick(grid.hi).c_str());
  c.dl->AddText({sx + 18, fmax.y - ImGui::GetTextLineHeight()}, dim, format_tick(grid.lo).c_str());
}

void distribution(const char* id, const model::Distribution& dist, ImVec2 size) {
  const Canvas c = begin_canvas(id, size);
  draw_title(c, dist.title);
  const model::Histogram& h = dist.histogram;
  if (dist.sample_count == 0 || h.counts.empty()) return draw_empty(c, "no samples recorded");
  const Frame f = plot_frame(c, {h.lo, h.hi}, {0.0, double(h.max_count()) * 1.1});
  draw_axes(c, f, dist.x_label, "samples", {});
  const double width = h.bin_width();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  for (std::size_t i = 0; i < h.counts.size(); ++i) {
    const double x0 = h.lo + width * double(i);
    const ImVec2 a = f.to_screen(x0, double(h.counts[i]));
    const ImVec2 b = f.to_screen(x0 + width, 0.0);
    const bool hover = c.hovered && mouse.x >= a.x && mouse.x < b.x;
    c.dl->AddRectFilled(a, {b.x - 1, b.y}, series_color(0, hover ? 255 : 170));
    if (hover) {
      ImGui::BeginTooltip();
      ImGui::Text("[%.4g, %.4g): %d samples", x0, x0 + width, h.counts[i]);
      ImGui::EndTooltip();
    }
  }
  struct Mark {
    const char* name;
    double value;
    ImU32 color;
  };
  const Mark marks[] = {{"p20", dist.marks.p20, series_color(2)},
                        {"p50", dist.marks.p50, series_color(3)},
                        {"p80", dist.marks.p80, series_color(1)}};
  float label_y = f.min.y + 2;
  for (const Mark& m : marks) {
    const ImVec2 p = f.to_screen(m.value, 0.0);
    c.dl->AddLine({p.x, f.min.y}, {p.x, f.max.y}, m.color, 2.0f);
    char buf[48];
    std::snprintf(buf, sizeof buf, "%s %.4g", m.name, m.value);
    c.dl->AddText({p.x + 3, label_y}, m.color, buf);
    label_y += ImGui::GetTextLineHeight();
  }
}

}  // namespace gdn::gui::draw
