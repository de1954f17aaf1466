// The report's tables (report_data.h): the headline figures and the per-run detail, each
// value's best in bold.
#include <algorithm>
#include <cmath>

#include "sim/report_data.h"

namespace gantry::report {
namespace {

enum class Better { kNone, kHigher, kLower };

struct Cell {
  std::string text;
  std::optional<double> value;  // what "best" compares
};

struct Column {
  std::string header;
  Better better = Better::kNone;
  std::vector<std::optional<Cell>> cells;
  bool raw_html = false;  // cells already escaped (the policy column with its swatch)
};

std::optional<Cell> PctCell(const Stat& s) {
  if (!s.mean) return std::nullopt;
  std::string text = FormatFixed(*s.mean, 2);
  if (s.std) text += " ± " + FormatFixed(*s.std, 2);
  return Cell{text, s.mean};
}

std::optional<Cell> CountCell(const Stat& s) {
  if (!s.mean) return std::nullopt;
  const bool whole = std::abs(*s.mean - std::round(*s.mean)) < 1e-9;
  std::string text = FormatFixed(*s.mean, whole ? 0 : 1);
  if (s.std) text += " ± " + FormatFixed(*s.std, 1);
  return Cell{text, s.mean};
}

std::optional<Cell> DurationCell(const Stat& s) {
  if (!s.mean) return std::nullopt;
  const auto [div, unit] = DurationUnit(*s.mean);
  std::string text = FormatFixed(*s.mean / div, 2);
  if (s.std) text += " ± " + FormatFixed(*s.std / div, 2);
  return Cell{text + " " + unit, s.mean};
}

std::string RenderTable(const std::vector<Column>& all, const std::string& css_class) {
  std::vector<const Column*> columns;
  for (const Column& c : all) {
    if (std::any_of(c.cells.begin(), c.cells.end(), [](const auto& x) { return x.has_value(); }))
      columns.push_back(&c);
  }
  if (columns.empty()) return "";
  size_t rows = 0;
  for (const Column* c : columns) rows = std::max(rows, c->cells.size());

  std::vector<std::optional<double>> best(columns.size());
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i]->better == Better::kNone) continue;
    int valued = 0;
    for (const auto& cell : columns[i]->cells) {
      if (!cell || !cell->value) continue;
      ++valued;
      const double v = *cell->value;
      if (!best[i] || (columns[i]->better == Better::kHigher ? v > *best[i] : v < *best[i]))
        best[i] = v;
    }
    if (valued < 2) best[i].reset();  // a lone value is not "best" of anything
  }

  std::string html = "<div class=\"table-wrap\"><table class=\"" + css_class + "\">\n<thead><tr>";
  for (const Column* c : columns) html += "<th scope=\"col\">" + HtmlEscape(c->header) + "</th>";
  html += "</tr></thead>\n<tbody>\n";
  for (size_t r = 0; r < rows; ++r) {
    html += "<tr>";
    for (size_t i = 0; i < columns.size(); ++i) {
      const Column& c = *columns[i];
      const std::optional<Cell>* cell = r < c.cells.size() ? &c.cells[r] : nullptr;
      if (cell == nullptr || !cell->has_value()) {
        html += "<td class=\"na\">–</td>";
        continue;
      }
      const Cell& x = **cell;
      const bool is_best = best[i] && x.value && std::abs(*x.value - *best[i]) < 1e-12;
      html += is_best ? "<td class=\"best\">" : "<td>";
      html += c.raw_html ? x.text : HtmlEscape(x.text);
      html += "</td>";
    }
    html += "</tr>\n";
  }
  html += "</tbody></table></div>\n";
  return html;
}

std::string PolicyLabelHtml(const Policy& p) {
  return std::string("<span class=\"swatch\" style=\"background:") + ChartColour(p.style) +
         "\"></span>" + HtmlEscape(p.name);
}

}  // namespace

std::string RenderHeadlineTables(const std::vector<Policy>& policies, const Json* published,
                                 const EndOfArrival& end) {
  std::string html;
  Column name_col{"Policy", Better::kNone, {}, true};
  Column runs_col{"Runs", Better::kNone, {}, false};
  Column alloc_col{"GPU allocation (%)", Better::kHigher, {}, false};
  Column frag_col{"Fragmentation (%)", Better::kLower, {}, false};
  Column failed_col{"Failed pods", Better::kLower, {}, false};
  Column pub_col{"Published (%)", Better::kNone, {}, false};
  Column diff_col{"Δ vs published (pp)", Better::kNone, {}, false};
  Column jct_col{"JCT mean", Better::kLower, {}, false};
  Column p95_col{"JCT p95", Better::kLower, {}, false};
  Column wait_col{"Wait mean", Better::kLower, {}, false};
  Column galloc_col{"GPU allocation mean (%)", Better::kHigher, {}, false};
  Column ftask_col{"Failed tasks", Better::kLower, {}, false};
  Column preempt_col{"Preempted tasks", Better::kLower, {}, false};
  for (const Policy& p : policies) {
    name_col.cells.push_back(Cell{PolicyLabelHtml(p), std::nullopt});
    std::optional<double> n_runs =
        p.runs.empty() ? std::nullopt : std::optional<double>(static_cast<double>(p.runs.size()));
    if (!n_runs && p.by_policy != nullptr) n_runs = NumberAt(*p.by_policy, "runs");
    runs_col.cells.push_back(n_runs ? std::optional<Cell>(Cell{FormatFixed(*n_runs, 0), n_runs})
                                    : std::nullopt);

    const Stat alloc = PolicyStat(
        p, "alloc_pct_" + end.key + "_mean", "alloc_pct_" + end.key + "_std",
        RunValues(p, [&](const Json& r) { return EndValue(Curve(Get(r, "alloc_pct")), end.at); }));
    alloc_col.cells.push_back(PctCell(alloc));
    frag_col.cells.push_back(PctCell(PolicyStat(
        p, "frag_pct_" + end.key + "_mean", "frag_pct_" + end.key + "_std",
        RunValues(p, [&](const Json& r) { return EndValue(Curve(Get(r, "frag_pct")), end.at); }))));

    const Stat failed =
        PolicyStat(p, "failed_pods_mean", "failed_pods_std",
                   RunValues(p, [](const Json& r) { return NumberAt(r, "failed_pods"); }));
    const Stat pods = PolicyStat(p, "pods_mean", "",
                                 RunValues(p, [](const Json& r) { return NumberAt(r, "pods"); }));
    std::optional<Cell> failed_cell = CountCell(failed);
    if (failed_cell && pods.mean && *pods.mean > 0)
      failed_cell->text += " (" + FormatFixed(100 * *failed.mean / *pods.mean, 2) + "%)";
    failed_col.cells.push_back(failed_cell);

    const auto pub = published != nullptr ? NumberAt(*published, p.name) : std::nullopt;
    pub_col.cells.push_back(pub ? std::optional<Cell>(Cell{FormatFixed(*pub, 2), pub})
                                : std::nullopt);
    diff_col.cells.push_back(
        pub && alloc.mean ? std::optional<Cell>(Cell{Signed(*alloc.mean - *pub, 2), std::nullopt})
                          : std::nullopt);

    jct_col.cells.push_back(DurationCell(
        PolicyStat(p, "jct_mean_s", "jct_mean_s_std",
                   RunValues(p, [](const Json& r) { return NumberAt(r, "jct_s", "mean"); }))));
    p95_col.cells.push_back(DurationCell(
        PolicyStat(p, "jct_p95_s", "jct_p95_s_std",
                   RunValues(p, [](const Json& r) { return NumberAt(r, "jct_s", "p95"); }))));
    wait_col.cells.push_back(DurationCell(
        PolicyStat(p, "wait_mean_s", "wait_mean_s_std",
                   RunValues(p, [](const Json& r) { return NumberAt(r, "wait_s", "mean"); }))));
    galloc_col.cells.push_back(PctCell(
        PolicyStat(p, "gpu_alloc_mean_pct", "gpu_alloc_mean_pct_std",
                   RunValues(p, [](const Json& r) { return NumberAt(r, "gpu_alloc_mean_pct"); }))));
    ftask_col.cells.push_back(CountCell(
        PolicyStat(p, "failed_tasks_mean", "failed_tasks_std",
                   RunValues(p, [](const Json& r) { return NumberAt(r, "failed_tasks"); }))));
    preempt_col.cells.push_back(CountCell(
        PolicyStat(p, "preempted_tasks_mean", "preempted_tasks_std",
                   RunValues(p, [](const Json& r) { return NumberAt(r, "preempted_tasks"); }))));
  }
  auto has_data = [](const std::vector<const Column*>& cols) {
    for (const Column* c : cols) {
      for (const auto& cell : c->cells) {
        if (cell) return true;
      }
    }
    return false;
  };

  html += "<h2>Headline figures</h2>\n";
  bool any_table = false;
  if (has_data({&alloc_col, &frag_col, &failed_col, &pub_col})) {
    any_table = true;
    html += "<h3>Once GPU demand of " + end.key + "% of capacity has arrived</h3>\n" +
            RenderTable({name_col, runs_col, alloc_col, frag_col, failed_col, pub_col, diff_col},
                        "headline allocation");
    html +=
        "<p class=\"note\">Mean ± sample standard deviation over seeds. GPU allocation and "
        "fragmentation are percentages of the cluster's GPU capacity; failed pods also as a share "
        "of the pods that arrived; Δ is in percentage points. Best in bold.</p>\n";
  }
  if (has_data({&jct_col, &p95_col, &wait_col, &galloc_col, &ftask_col, &preempt_col})) {
    any_table = true;
    html += "<h3>Job timing</h3>\n" + RenderTable({name_col, runs_col, jct_col, p95_col, wait_col,
                                                   galloc_col, ftask_col, preempt_col},
                                                  "headline timing");
    html +=
        "<p class=\"note\">Mean over seeds (± sample standard deviation where there are "
        "several). JCT: job completion time; wait: time queued before starting. Best in "
        "bold.</p>\n";
  }
  if (!any_table) html += "<p class=\"empty\">No headline figures in the summary.</p>\n";
  return html;
}

std::string RenderRunsTable(const std::vector<Policy>& policies, size_t run_count,
                            const EndOfArrival& end) {
  std::string html;
  // --- Per-run detail, folded away: it is for checking, not for reading first.
  if (run_count > 0) {
    Column pol{"Policy", Better::kNone, {}, true}, seed{"Seed", Better::kNone, {}, false};
    Column pods{"Pods", Better::kNone, {}, false}, failed{"Failed pods", Better::kNone, {}, false};
    Column a_end{"GPU alloc at " + end.key + "% (%)", Better::kNone, {}, false};
    Column f_end{"Frag at " + end.key + "% (%)", Better::kNone, {}, false};
    Column jct{"JCT mean", Better::kNone, {}, false}, p95{"JCT p95", Better::kNone, {}, false};
    Column wait{"Wait mean", Better::kNone, {}, false};
    Column gal{"GPU alloc mean (%)", Better::kNone, {}, false};
    Column ft{"Failed tasks", Better::kNone, {}, false};
    Column pt{"Preempted", Better::kNone, {}, false};
    Column wall{"Wall time (s)", Better::kNone, {}, false};
    auto num = [](std::optional<double> v, int decimals) -> std::optional<Cell> {
      if (!v) return std::nullopt;
      return Cell{FormatFixed(*v, decimals), v};
    };
    auto dur = [](std::optional<double> v) -> std::optional<Cell> {
      return v ? DurationCell(Stat{v, std::nullopt}) : std::nullopt;
    };
    for (const Policy& p : policies) {
      for (const Json* r : p.runs) {
        pol.cells.push_back(Cell{PolicyLabelHtml(p), std::nullopt});
        const std::string s = Text(Get(*r, "seed"));
        seed.cells.push_back(s.empty() ? std::nullopt : std::optional<Cell>(Cell{s, std::nullopt}));
        pods.cells.push_back(num(NumberAt(*r, "pods"), 0));
        failed.cells.push_back(num(NumberAt(*r, "failed_pods"), 0));
        a_end.cells.push_back(num(EndValue(Curve(Get(*r, "alloc_pct")), end.at), 2));
        f_end.cells.push_back(num(EndValue(Curve(Get(*r, "frag_pct")), end.at), 2));
        jct.cells.push_back(dur(NumberAt(*r, "jct_s", "mean")));
        p95.cells.push_back(dur(NumberAt(*r, "jct_s", "p95")));
        wait.cells.push_back(dur(NumberAt(*r, "wait_s", "mean")));
        gal.cells.push_back(num(NumberAt(*r, "gpu_alloc_mean_pct"), 2));
        ft.cells.push_back(num(NumberAt(*r, "failed_tasks"), 0));
        pt.cells.push_back(num(NumberAt(*r, "preempted_tasks"), 0));
        wall.cells.push_back(num(NumberAt(*r, "wall_s"), 2));
      }
    }
    html += "<details>\n<summary>Per-run results (" + std::to_string(run_count) +
            " runs)</summary>\n" +
            RenderTable({pol, seed, pods, failed, a_end, f_end, jct, p95, wait, gal, ft, pt, wall},
                        "runs");
    html += "</details>\n";
  }
  return html;
}

}  // namespace gantry::report
