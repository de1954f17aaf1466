#include "sim/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <utility>

namespace gantry {
namespace {

using Points = std::vector<std::pair<double, double>>;

// Tableau 10: distinct at a glance and still readable in greyscale print by their dashes
// once the palette wraps.
constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr int kPaletteSize = static_cast<int>(std::size(kPalette));
constexpr const char* kDashes[] = {"", "7 4", "2 3", "9 3 2 3"};
constexpr int kDashCount = static_cast<int>(std::size(kDashes));

// Styles are counted as unsigned: std::abs(INT_MIN) overflows (and a negative index would
// read before the arrays).
unsigned StyleIndex(int style) {
  return static_cast<unsigned>(style);
}

const char* Dash(int style) {
  return kDashes[(StyleIndex(style) / kPaletteSize) % kDashCount];
}

// ------------------------------------------------------------------------ chart scales

double NiceStep(double span, int target_ticks) {
  const double raw = span / std::max(1, target_ticks);
  if (!(raw > 0) || !std::isfinite(raw)) return 1;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / magnitude;
  const double nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
  return nice * magnitude;
}

// Compact: 0, 2.5, 20, 1k, 10k, 2M. Decimals follow the tick step, so labels on one axis
// agree.
std::string TickLabel(double v, double step) {
  const char* suffix = "";
  if (step >= 1e6) {
    v /= 1e6, step /= 1e6, suffix = "M";
  } else if (step >= 1e3) {
    v /= 1e3, step /= 1e3, suffix = "k";
  }
  if (std::abs(v) < step * 1e-9) v = 0;
  int decimals = 0;
  if (step < 1) decimals = std::min(6, static_cast<int>(std::ceil(-std::log10(step) - 1e-9)));
  // Steps like 2.5 (explicit ones) need their fraction.
  while (decimals < 6 && std::abs(step * std::pow(10.0, decimals) -
                                  std::round(step * std::pow(10.0, decimals))) > 1e-6) {
    ++decimals;
  }
  return FormatFixed(v, decimals) + suffix;
}

struct Scale {
  double lo = 0;
  double hi = 1;
  bool log = false;
  bool exact = false;
  std::vector<double> ticks;
  std::vector<std::string> labels;

  // 0..1 along the axis.
  double Fraction(double v) const {
    double f = log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
                   : (v - lo) / (hi - lo);
    return std::clamp(f, 0.0, 1.0);
  }
};

Scale MakeScale(const ChartAxis& axis, double data_lo, double data_hi, int target_ticks) {
  Scale s;
  s.log = axis.log;
  s.exact = axis.exact && axis.min && axis.max && *axis.max > *axis.min;
  if (s.log) {
    double lo = data_lo, hi = data_hi;
    if (axis.min && *axis.min > 0) lo = std::min(lo, *axis.min);
    if (axis.max && *axis.max > 0) hi = std::max(hi, *axis.max);
    if (!(lo > 0) || !std::isfinite(lo) || !std::isfinite(hi)) lo = 1, hi = 10;
    int d_lo = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
    int d_hi = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
    if (d_hi <= d_lo) d_hi = d_lo + 1;
    s.lo = std::pow(10.0, d_lo);
    s.hi = std::pow(10.0, d_hi);
    const int every = (d_hi - d_lo + 9) / 10;  // at most ~10 labelled decades
    for (int d = d_lo; d <= d_hi; d += every) {
      const double t = std::pow(10.0, d);
      s.ticks.push_back(t);
      s.labels.push_back(TickLabel(t, t));
    }
    return s;
  }
  double lo, hi;
  if (s.exact) {
    lo = *axis.min, hi = *axis.max;
  } else {
    lo = data_lo, hi = data_hi;
    if (axis.min) lo = std::min(lo, *axis.min);
    if (axis.max) hi = std::max(hi, *axis.max);
    if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
    if (hi - lo <= std::abs(hi) * 1e-12) {
      const double pad = lo == 0 ? 1 : std::abs(lo) * 0.1;
      if (!(axis.min && *axis.min == lo)) lo -= pad;
      hi += pad;
    }
  }
  double step = axis.step && *axis.step > 0 ? *axis.step : NiceStep(hi - lo, target_ticks);
  if ((hi - lo) / step > 40) step = NiceStep(hi - lo, target_ticks);  // an unreadable step
  if (!s.exact) {
    lo = std::floor(lo / step + 1e-9) * step;
    hi = std::ceil(hi / step - 1e-9) * step;
  }
  s.lo = lo, s.hi = hi;
  for (double k = std::ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k += 1) {
    s.ticks.push_back(k * step);
    s.labels.push_back(TickLabel(k * step, step));
  }
  return s;
}

std::string Coord(double v) {
  return FormatFixed(v, 1);
}

}  // namespace

const char* ChartColour(int style) {
  return kPalette[StyleIndex(style) % kPaletteSize];
}

std::string FormatFixed(double v, int decimals) {
  // Sized by a first pass: the largest doubles have 309 digits before the point.
  const int length = std::snprintf(nullptr, 0, "%.*f", decimals, v);
  std::string s(static_cast<size_t>(std::max(length, 0)), '\0');
  std::snprintf(s.data(), s.size() + 1, "%.*f", decimals, v);
  // "-0.00" reads as a sign that is not there.
  if (!s.empty() && s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
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
      default:
        out += c;
    }
  }
  return out;
}

std::string LineChartSvg(const ChartSpec& spec, const std::vector<ChartSeries>& series) {
  // Only the points the axes can show.
  std::vector<Points> pts(series.size());
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo;
  double y_lo = x_lo, y_hi = -x_lo;
  for (size_t i = 0; i < series.size(); ++i) {
    for (const auto& [x, y] : series[i].points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      if ((spec.x.log && x <= 0) || (spec.y.log && y <= 0)) continue;
      pts[i].emplace_back(x, y);
      x_lo = std::min(x_lo, x), x_hi = std::max(x_hi, x);
      y_lo = std::min(y_lo, y), y_hi = std::max(y_hi, y);
    }
  }
  std::vector<size_t> shown;
  for (size_t i = 0; i < series.size(); ++i) {
    if (!pts[i].empty()) shown.push_back(i);
  }

  constexpr int kLegendWidth = 160, kLegendRow = 18;
  constexpr size_t kLegendChars = 20;
  const int left = 64, top = 40, bottom = 50;
  const int right = shown.empty() ? 20 : kLegendWidth + 16;
  const int width = std::max(spec.width, left + right + 120);
  const int height = std::max({spec.height, top + bottom + 80,
                               top + 8 + kLegendRow * static_cast<int>(shown.size()) + bottom});
  const double pw = width - left - right, ph = height - top - bottom;
  const Scale sx = MakeScale(spec.x, x_lo, x_hi, std::max(2, static_cast<int>(pw / 70)));
  const Scale sy = MakeScale(spec.y, y_lo, y_hi, std::max(2, static_cast<int>(ph / 45)));
  auto px = [&](double x) { return left + sx.Fraction(x) * pw; };
  auto py = [&](double y) { return top + (1 - sy.Fraction(y)) * ph; };

  const std::string title = HtmlEscape(spec.title);
  // No xmlns: the HTML parser puts inline <svg> in the SVG namespace by itself, and the page
  // then holds no URL at all.
  std::string svg = "<svg class=\"chart\" viewBox=\"0 0 " + std::to_string(width) + " " +
                    std::to_string(height) + "\" width=\"" + std::to_string(width) +
                    "\" height=\"" + std::to_string(height) + "\" role=\"img\" aria-label=\"" +
                    title +
                    "\" font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, Arial, "
                    "sans-serif\" font-size=\"13\">\n";
  svg += "<title>" + title + "</title>\n";
  svg += "<text x=\"" + std::to_string(left) +
         "\" y=\"22\" font-size=\"15\" font-weight=\"600\" fill=\"#1f2933\">" + title + "</text>\n";
  svg += "<rect x=\"" + std::to_string(left) + "\" y=\"" + std::to_string(top) + "\" width=\"" +
         Coord(pw) + "\" height=\"" + Coord(ph) + "\" fill=\"#fff\" stroke=\"none\"/>\n";

  // Gridlines and tick labels.
  svg += "<g stroke=\"#e4e7eb\" stroke-width=\"1\">\n";
  for (double t : sx.ticks) {
    const std::string x = Coord(px(t));
    svg += "<line x1=\"" + x + "\" y1=\"" + std::to_string(top) + "\" x2=\"" + x + "\" y2=\"" +
           Coord(top + ph) + "\"/>\n";
  }
  for (double t : sy.ticks) {
    const std::string y = Coord(py(t));
    svg += "<line x1=\"" + std::to_string(left) + "\" y1=\"" + y + "\" x2=\"" + Coord(left + pw) +
           "\" y2=\"" + y + "\"/>\n";
  }
  svg += "</g>\n<g fill=\"#52606d\">\n";
  // Crowded x labels (an explicit step on a narrow chart): every other one, gridlines all.
  size_t stride = 1;
  if (sx.ticks.size() > 1) {
    const double gap =
        (px(sx.ticks.back()) - px(sx.ticks.front())) / static_cast<double>(sx.ticks.size() - 1);
    while (gap * static_cast<double>(stride) < 36) ++stride;
  }
  for (size_t i = 0; i < sx.ticks.size(); i += stride) {
    svg += "<text x=\"" + Coord(px(sx.ticks[i])) + "\" y=\"" + Coord(top + ph + 17) +
           "\" text-anchor=\"middle\">" + HtmlEscape(sx.labels[i]) + "</text>\n";
  }
  for (size_t i = 0; i < sy.ticks.size(); ++i) {
    svg += "<text x=\"" + std::to_string(left - 7) + "\" y=\"" + Coord(py(sy.ticks[i]) + 4) +
           "\" text-anchor=\"end\">" + HtmlEscape(sy.labels[i]) + "</text>\n";
  }
  svg += "</g>\n";

  // Axes, drawn over the grid.
  svg += "<path d=\"M" + std::to_string(left) + " " + std::to_string(top) + "V" + Coord(top + ph) +
         "H" + Coord(left + pw) + "\" fill=\"none\" stroke=\"#7b8794\" stroke-width=\"1\"/>\n";
  svg += "<text x=\"" + Coord(left + pw / 2) + "\" y=\"" + std::to_string(height - 10) +
         "\" text-anchor=\"middle\" fill=\"#323f4b\">" + HtmlEscape(spec.x.label) + "</text>\n";
  svg += "<text transform=\"translate(16 " + Coord(top + ph / 2) +
         ") rotate(-90)\" text-anchor=\"middle\" fill=\"#323f4b\">" + HtmlEscape(spec.y.label) +
         "</text>\n";

  if (shown.empty()) {
    svg += "<text x=\"" + Coord(left + pw / 2) + "\" y=\"" + Coord(top + ph / 2) +
           "\" text-anchor=\"middle\" fill=\"#9aa5b1\">no data</text>\n";
  }

  // Series.
  for (size_t i : shown) {
    const ChartSeries& s = series[i];
    std::string style = std::string(" stroke=\"") + ChartColour(s.style) + "\"";
    if (*Dash(s.style) != '\0') style += std::string(" stroke-dasharray=\"") + Dash(s.style) + "\"";
    if (pts[i].size() == 1) {
      svg += "<circle cx=\"" + Coord(px(pts[i][0].first)) + "\" cy=\"" +
             Coord(py(pts[i][0].second)) + "\" r=\"3\" fill=\"" + ChartColour(s.style) + "\"><title>" +
             HtmlEscape(s.name) + "</title></circle>\n";
      continue;
    }
    svg += "<polyline fill=\"none\" stroke-width=\"2\" stroke-linejoin=\"round\"" + style +
           " points=\"";
    for (size_t k = 0; k < pts[i].size(); ++k) {
      if (k > 0) svg += ' ';
      svg += Coord(px(pts[i][k].first)) + "," + Coord(py(pts[i][k].second));
    }
    svg += "\"><title>" + HtmlEscape(s.name) + "</title></polyline>\n";
  }

  // Legend, right of the plot; long names cut (on a UTF-8 boundary), whole in the tooltip.
  const int lx = left + static_cast<int>(pw) + 16;
  for (size_t k = 0; k < shown.size(); ++k) {
    const ChartSeries& s = series[shown[k]];
    const int ly = top + 8 + kLegendRow * static_cast<int>(k);
    std::string name = s.name;
    if (name.size() > kLegendChars) {
      size_t cut = kLegendChars - 1;
      while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;
      name = name.substr(0, cut) + "…";
    }
    svg += "<g><title>" + HtmlEscape(s.name) + "</title><line x1=\"" + std::to_string(lx) +
           "\" y1=\"" + std::to_string(ly) + "\" x2=\"" + std::to_string(lx + 22) + "\" y2=\"" +
           std::to_string(ly) + "\" stroke-width=\"2.5\" stroke=\"" + ChartColour(s.style) + "\"" +
           (*Dash(s.style) != '\0' ? std::string(" stroke-dasharray=\"") + Dash(s.style) + "\""
                                   : std::string()) +
           "/><text x=\"" + std::to_string(lx + 28) + "\" y=\"" + std::to_string(ly + 4) +
           "\" fill=\"#1f2933\">" + HtmlEscape(name) + "</text></g>\n";
  }
  svg += "</svg>\n";
  return svg;
}
}  // namespace gantry
