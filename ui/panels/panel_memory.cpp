// How big the KV cache of real models gets: bytes against context length (one line per variant of a model,
// or per model), where it passes the memory of common accelerators, every model at one context, and the
// floats one layer stores (Tables 1 and 2 of arXiv 2604.00965).
#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>

#include "core/kv_compare.h"
#include "core/memory.h"
#include "ui/logic/colour_map.h"
#include "ui/logic/cost_text.h"
#include "ui/panels/panels.h"
#include "ui/widgets/bar_chart.h"
#include "ui/widgets/layout_check_frame.h"
#include "ui/widgets/line_chart.h"
#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"
#include "ui/widgets/variant_blocks.h"

namespace attn::ui {
namespace {

std::vector<ReferenceLine> accelerator_lines() {
  std::vector<ReferenceLine> lines;
  for (const Accelerator& a : kAccelerators) lines.push_back({static_cast<double>(a.bytes), a.label});
  return lines;
}

// One line of the chart and the shape it is drawn for.
struct CacheLine {
  Series series;
  ModelShape shape;
  bool own = false;  // the model as built, among its variants
};

// Total bytes at contexts 1, 2, 4, ... 2^last (window-aware, as the model really caches), after those `out` has.
void add_cache_points(Series& out, const ModelShape& m, const ModelViewSettings& s, int last) {
  for (int e = static_cast<int>(out.x.size()); e <= last; ++e) {
    const std::uint64_t tokens = std::uint64_t{1} << e;
    out.x.push_back(static_cast<double>(tokens));
    out.y.push_back(
        static_cast<double>(kv_cache_size(m, tokens, static_cast<std::uint64_t>(s.batch), s.dtype).total_bytes));
  }
}

Series cache_series(const ModelShape& m, const ModelViewSettings& s, std::string name, ImU32 colour) {
  Series out{std::move(name), {}, {}, colour, {}, {}};
  add_cache_points(out, m, s, kMaxContextExponent);
  return out;
}

// A model with sliding-window layers also as if every layer kept every token: what its windows save is the gap
// between the two lines (the Gemma 3 page quotes where this one crosses 80 GB). Unnamed when the model has none.
CacheLine without_windows(const ModelShape& m, const ModelViewSettings& s) {
  if (!has_sliding_window(m)) return {};
  ModelShape full = m;
  full.window = 0;
  full.local_layers = 0;
  full.global_layers = 0;
  const char* const variant = m.variant == Variant::Mla   ? "MLA"
                              : m.variant == Variant::Mqa ? "MQA"
                              : m.variant == Variant::Gqa ? "GQA"
                                                          : "MHA";
  Series line =
      cache_series(full, s, std::string(variant) + ", no windows", variant_colour(static_cast<int>(m.variant)));
  line.style = series_style(8);  // solid with squares: apart from the variants' lines and the round crossing dots
  line.end_label = "no windows";
  return {std::move(line), full};
}

// Past 2^20 tokens, as far as a crossing near the right edge needs (context_axis_end); at most 2^24.
constexpr int kMaxExtendedExponent = 24;

std::vector<CacheLine> chart_lines(const AppState& state, const ModelShape& m) {
  std::vector<CacheLine> lines;
  if (state.models.lines_per_preset) {
    // Models with the same cache at every context (llama-3-70b and qwen2.5-72b) share one line, named for both:
    // one drawn over the other would hide it.
    for (std::size_t i = 0; i < state.models.presets.size(); ++i) {
      Series line = cache_series(state.models.presets[i], state.models, state.models.presets[i].name, preset_colour(i));
      const auto same =
          std::find_if(lines.begin(), lines.end(), [&](const CacheLine& l) { return l.series.y == line.y; });
      if (same != lines.end()) {
        same->series.name += " = " + line.name;
        same->series.end_label = same->series.name;
        continue;
      }
      line.style = series_style(lines.size());
      line.end_label = line.name;
      lines.push_back({std::move(line), state.models.presets[i]});
    }
    return lines;
  }
  static const char* const kNames[] = {"MHA", "GQA", "MQA", "MLA"};
  const auto forms = variant_forms(m);
  for (int i = 0; i < 4; ++i) {
    const VariantForm& f = forms[static_cast<std::size_t>(i)];
    if (!f.shape) continue;
    std::string name = kNames[i];
    // The MHA, GQA and MQA forms of a model with decoupled RoPE keep its wider keys (DeepSeek: 128 + 64).
    const std::string keys =
        f.variant != Variant::Mla && f.shape->rope_dim > 0
            ? "keys " + std::to_string(f.shape->head_dim) + " + " + std::to_string(f.shape->rope_dim)
            : "";
    if (i == 1) name += " (G=" + std::to_string(f.shape->kv_heads) + (keys.empty() ? "" : ", " + keys) + ")";
    else if (!keys.empty()) name += " (" + keys + ")";
    // The model's name without " (open)" (the preset of the Real model view's model): the table's first column is
    // what squeezes its numbers.
    if (f.variant == m.variant)
      name += " \u2190 " + (m.name.ends_with(" (open)") ? m.name.substr(0, m.name.size() - 7) : m.name);
    Series line = cache_series(*f.shape, state.models, name, variant_colour(i));
    line.style = series_style(static_cast<std::size_t>(i));  // one variant, one pattern, whichever model is shown
    line.end_label = kNames[i];
    lines.push_back({std::move(line), *f.shape, f.variant == m.variant});
  }
  if (CacheLine full = without_windows(m, state.models); !full.series.name.empty()) lines.push_back(std::move(full));
  return lines;
}

// The longest context each line's cache fits in each accelerator, exactly (nullopt: more than kv accepts).
using Fits = std::vector<std::array<std::optional<std::uint64_t>, std::size(kAccelerators)>>;
Fits longest_contexts(const std::vector<CacheLine>& lines, const ModelViewSettings& s) {
  Fits fits(lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i)
    for (std::size_t a = 0; a < std::size(kAccelerators); ++a)
      fits[i][a] = longest_context(lines[i].shape, kAccelerators[a].bytes, static_cast<std::uint64_t>(s.batch), s.dtype,
                                   static_cast<std::uint64_t>(kv_limits::kMaxTokens));
  return fits;
}

// A dot where each line meets each accelerator's memory, numbered where the lesson page (`page`) quotes the crossing:
// the numbers the page talks about are on the chart, every one is in the table under it.
std::vector<ChartMark> fit_marks(const std::vector<CacheLine>& lines, const Fits& fits, const std::string& page) {
  std::vector<ChartMark> marks;
  for (std::size_t i = 0; i < lines.size(); ++i)
    for (std::size_t a = 0; a < std::size(kAccelerators); ++a)
      if (const auto n = fits[i][a]; n && *n > 0)
        marks.push_back({static_cast<double>(*n), static_cast<double>(kAccelerators[a].bytes),
                         text_quotes_number(page, *n) ? format_exact(static_cast<double>(*n), NumberUnit::Plain) : "",
                         lines[i].series.colour});
  return marks;
}

// A line's colour made dark (light page) or light enough to read as text at 4.5:1 on both of a table's row colours.
ImU32 legible_in_table(ImU32 colour) {
  const ImVec4 page = ImGui::GetStyleColorVec4(ImGuiCol_WindowBg), c = ImGui::ColorConvertU32ToFloat4(colour);
  Rgb out{c.x, c.y, c.z};
  for (const ImGuiCol row : {ImGuiCol_TableRowBg, ImGuiCol_TableRowBgAlt}) {
    const ImVec4 r = ImGui::GetStyleColorVec4(row);  // drawn over the page at its alpha
    const Rgb bg{page.x + (r.x - page.x) * r.w, page.y + (r.y - page.y) * r.w, page.z + (r.z - page.z) * r.w};
    out = legible_on(out, bg, 4.5);
  }
  return pack(out);
}

// A row's name in the body font (the cells' font has no arrows), on the baseline of the numbers beside it.
void row_name(const std::string& name, ImU32 colour, const ImFont* numbers) {
  const ImFont* body = ImGui::GetFont();
  ImGui::SetCursorPosY(ImGui::GetCursorPosY() +
                       std::max(0.0f, numbers->Ascent * numbers->Scale - body->Ascent * body->Scale));
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colour), "%s", name.c_str());
}

// Every dot's number, including those a crowded chart could not label and those past its right edge: in `numbers`,
// the cells' font where the chart keeps its third of the window with it (the pages quote these numbers).
void fits_table(const std::vector<CacheLine>& lines, const Fits& fits, float width, ImFont* numbers) {
  if (!ImGui::BeginTable("fits", 1 + static_cast<int>(std::size(kAccelerators)),
                         ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit,
                         {width, 0}))
    return;
  ImGui::TableSetupColumn("longest context (tokens)");
  for (const Accelerator& a : kAccelerators) ImGui::TableSetupColumn(a.label);
  ImGui::TableHeadersRow();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(0);
    row_name(lines[i].series.name, legible_in_table(lines[i].series.colour), numbers);
    ImGui::PushFont(numbers);
    for (std::size_t a = 0; a < std::size(kAccelerators); ++a) {
      ImGui::TableSetColumnIndex(static_cast<int>(a) + 1);
      const auto n = fits[i][a];
      ImGui::TextUnformatted(
          n ? format_exact(static_cast<double>(*n), NumberUnit::Plain).c_str()
            : ("over " + format_unit(static_cast<double>(kv_limits::kMaxTokens), NumberUnit::Tokens)).c_str());
    }
    ImGui::PopFont();
  }
  ImGui::EndTable();
}

// Its header in the body font, its rows in `numbers`, and the gap under it.
float fits_table_height(std::size_t rows, const ImFont* numbers) {
  const float pad = 2 * ImGui::GetStyle().CellPadding.y;
  return ImGui::GetTextLineHeight() + pad + (font_size(numbers) + pad) * static_cast<float>(rows) +
         ImGui::GetStyle().ItemSpacing.y;
}

// The caption names the variant the model really uses: Table 1 covers MHA and its GQA and MQA forms.
std::string table_caption(const ModelShape& m) {
  switch (m.variant) {
    case Variant::Mla: return "Floats stored (Table 2 of arXiv 2604.00965: latent attention)";
    case Variant::Gqa:
      return "Floats stored (Table 1 of arXiv 2604.00965, grouped-query: " + std::to_string(m.kv_heads) + " KV heads)";
    case Variant::Mqa: return "Floats stored (Table 1 of arXiv 2604.00965, multi-query: one KV head)";
    case Variant::Mha: break;
  }
  return "Floats stored (Table 1 of arXiv 2604.00965: multi-head attention)";
}

// Under the floats table: the context and d it is for, the sliding windows, and that its cache row is the model's bar
// (the two agree).
std::string floats_note(const ModelShape& m, const ModelViewSettings& s) {
  const std::uint64_t context = static_cast<std::uint64_t>(s.context);
  const bool windows =
      has_sliding_window(m) && global_layer_count(m) < m.layers && context > static_cast<std::uint64_t>(m.window);
  const StoredFloats all = stored_floats_all_layers(m, context);
  const double bits = static_cast<double>(bits_per_element(s.dtype));
  // Short: beside the chart it shares the height with the bars, and it must show whole.
  std::string note = "At " + format_unit(static_cast<double>(context), NumberUnit::Tokens) +
                     " tokens, d_model = " + std::to_string(m.d_model) + ". ";
  if (windows)
    note += std::to_string(m.layers - global_layer_count(m)) + " sliding-window layers hold only the last " +
            format_exact(m.window, NumberUnit::Plain) + " tokens. ";
  note += "The cache row \u00D7 " + std::string(to_string(s.dtype)) + " = " +
          format_value(static_cast<double>(all.cache) * bits / 8, NumberUnit::DecimalBytes) +
          ", one sequence: " + m.name + "'s bar.";
  return note;
}

void stored_floats_table(const ModelShape& m, const ModelViewSettings& s) {
  if (m.d_model <= 0) return;
  const std::uint64_t context = static_cast<std::uint64_t>(s.context);
  // A model of sliding-window layers only (Mistral 7B) has no global layer: its one layer keeps its window.
  const bool windows =
      has_sliding_window(m) && global_layer_count(m) < m.layers && context > static_cast<std::uint64_t>(m.window);
  const bool all_local = windows && global_layer_count(m) == 0;
  const StoredFloats one = stored_floats_per_layer(m, all_local ? static_cast<std::uint64_t>(m.window) : context);
  const StoredFloats all = stored_floats_all_layers(m, context);
  TextWrappedAtSpaces(table_caption(m));
  if (ImGui::BeginTable("floats", 4,
                        ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("");
    ImGui::TableSetupColumn(all_local ? "one layer (its window)" : windows ? "a global layer" : "one layer");
    ImGui::TableSetupColumn(("all " + std::to_string(m.layers) + " layers").c_str());
    ImGui::TableSetupColumn("share");
    ImGui::TableHeadersRow();
    const std::pair<const char*, std::pair<std::uint64_t, std::uint64_t>> rows[] = {
        {m.variant == Variant::Mla ? "latent cache" : "K, V cache", {one.cache, all.cache}},
        {"weights", {one.weights, all.weights}},
        {"total", {one.total(), all.total()}}};
    for (const auto& [name, value] : rows) {
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::TextUnformatted(name);
      ImGui::TableSetColumnIndex(1);
      ImGui::TextUnformatted(format_exact(static_cast<double>(value.first), NumberUnit::Plain).c_str());
      ImGui::TableSetColumnIndex(2);
      ImGui::TextUnformatted(format_exact(static_cast<double>(value.second), NumberUnit::Plain).c_str());
      ImGui::TableSetColumnIndex(3);
      ImGui::TextUnformatted(percent(value.second, all.total()).c_str());
    }
    ImGui::EndTable();
  }
  ImGui::BeginGroup();
  TextDisabledWrapped(floats_note(m, s));
  ImGui::EndGroup();
  NoteInSight(SightKind::Result, "floats note", "the note under the floats table", ImGui::GetItemRectMin(),
              ImGui::GetItemRectMax());
}

// The height stored_floats_table takes at `width`: its caption, header and three rows, and its note.
float stored_floats_height(const ModelShape& m, const ModelViewSettings& s, float width) {
  if (m.d_model <= 0) return 0;
  const float line = ImGui::GetTextLineHeight(), gap = ImGui::GetStyle().ItemSpacing.y;
  const auto text_h = [&](const std::string& t) {
    return line * static_cast<float>(WrapAtSpaces(t, width).size()) + gap;
  };
  return text_h(table_caption(m)) + (line + 2 * ImGui::GetStyle().CellPadding.y) * 4 + gap + text_h(floats_note(m, s));
}

}  // namespace

void MemoryPanel(AppState& state, ImVec2 pos, ImVec2 size) {
  BeginPanel("Memory", pos, size);
  const ModelShape* m = PresetControls(state, true, true);
  if (!m) {
    ImGui::End();
    return;
  }
  ImGui::TextUnformatted("Lines:");
  ImGui::SameLine();
  if (ImGui::RadioButton(("the four variants of " + m->name).c_str(), !state.models.lines_per_preset))
    state.models.lines_per_preset = false;
  ImGui::SameLine();
  if (ImGui::RadioButton("every model as built", state.models.lines_per_preset)) state.models.lines_per_preset = true;

  const std::vector<CacheLine> lines = chart_lines(state, *m);
  const Fits fits = longest_contexts(lines, state.models);
  const bool lesson_here = state.lesson.open() && state.lesson.current_page().view == View::Memory;
  const std::vector<ChartMark> marks = fit_marks(lines, fits, lesson_here ? state.lesson.current_page().text : "");
  // The x axis runs on past a crossing near its right end (Gemma 3's 971,237 tokens), so every dot is clearly inside.
  std::vector<double> mark_x;
  for (const ChartMark& mk : marks) mark_x.push_back(mk.x);
  const double x_end =
      context_axis_end(mark_x, std::ldexp(1.0, kMaxContextExponent), std::ldexp(1.0, kMaxExtendedExponent));
  const int end_exponent = static_cast<int>(std::lround(std::log2(x_end)));
  std::vector<Series> series;
  // The model's own line named with its cache at the right edge: on a log axis 74 GB and 80 GB are a pixel apart,
  // and a page may say it stays under a memory up to the end (DeepSeek V3's MLA at 1M tokens).
  for (const CacheLine& l : lines) {
    series.push_back(l.series);
    add_cache_points(series.back(), l.shape, state.models, end_exponent);
    if (l.own) series.back().end_label += ", " + format_value(series.back().y.back(), NumberUnit::DecimalBytes);
  }
  const std::vector<ReferenceLine> references = accelerator_lines();
  auto [lo, hi] = positive_extent(series);
  hi = std::max(hi, 141e9);
  // Side by side where the table and the bars have room beside the chart; else one under the other, scrolling.
  const float avail_w = ImGui::GetContentRegionAvail().x, avail_h = ImGui::GetContentRegionAvail().y;
  const bool side_by_side = avail_w >= 62.0f * ImGui::GetFontSize();
  const float chart_w = side_by_side ? avail_w * 0.58f : avail_w;
  LineChartOptions o;
  o.title = "KV cache, " + std::string(to_string(state.models.dtype)) + ", batch " + std::to_string(state.models.batch);
  o.x = {1, x_end, AxisScale::Log10, NumberUnit::Tokens, "context length (tokens)"};
  o.y = nice_axis(lo, hi, AxisScale::Log10, NumberUnit::DecimalBytes, "cache size (GB = 10\u2079 bytes)");
  o.references = references;
  o.marks = marks;
  // Every page on this view is about the chart. Each line is named at its end and in the table under the chart: a
  // legend would only cover the plot (the reference lines at its top).
  o.flags = LineChartFlags_PageChart | LineChartFlags_NoLegend;
  // The chart and its table fill the view (stacked, the rest scrolls below them); the chart keeps a readable height.
  // A lesson page here is about the chart and its table: stacked, they alone fill the view (the chart a third of the
  // window high), and the bars and the floats, which no page talks about, are left out instead of showing their
  // title cut at the bottom edge. Closing the lesson, or a wider window, brings them back.
  const bool page_here = !side_by_side && state.lesson.open() && state.lesson.current_page().view == View::Memory;
  const float chart_need = ImGui::GetIO().DisplaySize.y / 3 + LineChartOverhead(o, chart_w) + 1;
  const float cells_h = fits_table_height(lines.size(), cell_font());
  const bool big_numbers = avail_h - 6 - cells_h >= chart_need;
  ImFont* numbers = big_numbers ? cell_font() : ImGui::GetFont();
  const float table_h = big_numbers ? cells_h : fits_table_height(lines.size(), numbers);
  o.size = {chart_w, std::max(14.0f * ImGui::GetFontSize(), avail_h - 6 - table_h)};
  ImGui::BeginGroup();
  LineChart("cache", series, o);
  fits_table(lines, fits, chart_w, numbers);
  ImGui::EndGroup();
  if (side_by_side) ImGui::SameLine(0, 16);
  const std::string bars_title =
      "Every model at " + format_unit(static_cast<double>(state.models.context), NumberUnit::Tokens) + " tokens";
  if (page_here) {
    ImGui::End();
    return;
  }
  ImGui::BeginGroup();
  std::vector<Bar> bars;
  for (std::size_t i = 0; i < state.models.presets.size(); ++i) {
    const ModelShape& p = state.models.presets[i];
    const KvCacheSize s = kv_cache_size(p, static_cast<std::uint64_t>(state.models.context),
                                        static_cast<std::uint64_t>(state.models.batch), state.models.dtype);
    // The variant beside the name: after the value it would lie on a reference line or far from its bar.
    const std::string variant = p.variant == Variant::Mla   ? "MLA"
                                : p.variant == Variant::Mqa ? "MQA"
                                : p.variant == Variant::Gqa ? "GQA"
                                                            : "MHA";
    bars.push_back({p.name + " (" + variant + ")", static_cast<double>(s.total_bytes), preset_colour(i), ""});
  }
  BarChartOptions b;
  b.title = bars_title;
  b.unit = NumberUnit::DecimalBytes;
  b.scale = AxisScale::Log10;  // sizes span orders of magnitude; on a linear axis the small ones vanish
  b.references = references;
  const float bars_h = (static_cast<float>(bars.size()) + 4.5f) * ImGui::GetTextLineHeightWithSpacing();
  const float bars_w = side_by_side ? avail_w - chart_w - 16 : avail_w;
  b.size = {bars_w, side_by_side ? std::max(avail_h * 0.55f, bars_h) : bars_h};
  // Beside the chart, the bars close up so the floats table and its note under them stay whole in the view.
  if (side_by_side)
    b.max_height = avail_h - stored_floats_height(*m, state.models, bars_w) - 2 * ImGui::GetStyle().ItemSpacing.y - 4;
  BarChart("models", bars, b);
  ImGui::Spacing();
  stored_floats_table(*m, state.models);
  ImGui::EndGroup();
  ImGui::End();
}

}  // namespace attn::ui
