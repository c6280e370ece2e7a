// Decoding token by token: the new token's query, the cache as a stack of rows that grows by one each
// step, the attention row over the cache, and the output row, which equals row t of the causal trace.
#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "core/memory.h"
#include "core/text_format.h"
#include "ui/logic/decode_layout.h"
#include "ui/logic/hover_text.h"
#include "ui/panels/panels.h"
#include "ui/widgets/equation.h"
#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"

namespace attn::ui {
namespace {

void decode_controls(AppState& state, const DecodeTrace& d) {
  const int n = static_cast<int>(d.steps.size());
  ImGui::BeginDisabled(state.decode.token == 0);
  if (ImGui::ArrowButton("prev", ImGuiDir_Left)) state.set_decode_token(state.decode.token - 1);
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(state.decode.token == n - 1);
  if (ImGui::ArrowButton("next", ImGuiDir_Right)) state.set_decode_token(state.decode.token + 1);
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::Button(state.decode.playing ? "Pause" : "Play")) state.toggle_decode_play();
  ImGui::SameLine(0, 16);
  const DecodeStep& s = d.steps[static_cast<std::size_t>(state.decode.token)];
  ImGui::PushFont(title_font());
  ImGui::Text("Token %d of %d:  '%s' arrives", s.t + 1, n, s.token.c_str());
  ImGui::PopFont();
}

void counters(const DecodeTrace& d, const DecodeStep& s) {
  const AttentionConfig& a = d.attention;
  std::string per_token = a.variant == Variant::Mla ? "the latent, " + std::to_string(a.latent_dim)
                                                    : "2 \u00D7 " + plural(kv_head_count(a), "KV head") + " \u00D7 " +
                                                          std::to_string(a.head_dim);
  if (decoupled_rope(a)) per_token += " + the turned key, " + std::to_string(a.rope_dim);
  if (a.sparse) per_token += " + the indexer's key, " + std::to_string(a.sparse->indexer_dim);
  per_token += " = " + std::to_string(d.elements_per_token) + " numbers";
  const std::string text =
      std::string(d.cross_attention ? "Cached once, before the first token: the context's " : "Cached: ") +
      plural(s.cache_tokens, "token") + " \u00D7 (" + per_token + ") = " + thousands(s.cache_elements) +
      " numbers in this layer = " + thousands(s.cache_elements * 2) + " bytes in bf16, " +
      thousands(s.cache_elements * 4) + " in fp32. " +
      (d.cross_attention ? "A new token adds nothing to it: it only reads it."
                         : "Each new token adds " + std::to_string(d.elements_per_token) + " more.");
  TextWrappedAtSpaces(text, accent_colour());
}

// What every section reads: the step shown, and the cache's rows so far.
struct Shown {
  const DecodeTrace& d;
  const DecodeStep& s;
  const Trace& full;  // the causal trace the step must reproduce row by row
  int t;
  int cache_rows;  // self-attention caches the tokens so far; cross-attention the whole context, from the first on
  std::vector<std::string> cached, now;
};

constexpr HeatmapFlags kPlain = HeatmapFlags_NoTooltip | HeatmapFlags_NoLegend;
// A query, a cache or a reference row: its columns are dimensions no text names, and their labels' line is room.
constexpr HeatmapFlags kVectors = kPlain | HeatmapFlags_NoColumnLabels;

// A numbered section: its heading, the line it folds to, and the matrices it shows as one flowing formula.
struct Section {
  std::string id, heading, folded;
  std::vector<std::unique_ptr<Matrix>> owned;  // matrices built for the step, where the terms point
  std::vector<Term> terms;
  std::vector<std::string> ops;
  std::optional<Agreement> badge;  // the check line under the output
};

Section section(std::string id, std::string heading, std::string folded) {
  Section sec;
  sec.id = std::move(id);
  sec.heading = std::move(heading);
  sec.folded = std::move(folded);
  return sec;
}

// Terms laid side by side, the gaps around an operator apart; a space more before a term that starts a pair.
void add_term(Section& sec, Term term) {
  if (!sec.terms.empty()) sec.ops.push_back(term.joined ? "" : "  ");
  sec.terms.push_back(std::move(term));
}

// The new token's query, per head: the only query computed this step.
Section query_section(const Shown& v) {
  Section sec = section("queries", "1. The new token's query, per head (never needed again after this step)",
                        "1. The new token's query");
  // With rope the query as it attends: turned by its position (mla: [q | q_r]).
  for (std::size_t h = 0; h < v.full.heads.size(); ++h) {
    const Matrix& q = *sec.owned.emplace_back(std::make_unique<Matrix>(v.full.heads[h].scored_q().row(v.t)));
    const std::string name = v.d.attention.positions == Positions::Rope ? "q (turned), head " : "q, head ";
    add_term(sec, {.name = name + std::to_string(h), .m = &q, .rows = &v.now, .flags = kVectors});
  }
  return sec;
}

// The cache: every row so far, the new one outlined; K and V of a KV head side by side, as a pair, read along the
// token labels of the line's first term (EquationFlow writes them once a line).
Section cache_section(const Shown& v) {
  Section sec =
      section("cache",
              v.d.cross_attention
                  ? "2. The cross-attention cache: the context's keys and values, computed once before the first token "
                    "and read by every new one"
                  : "2. The KV cache: the outlined row was just appended, the rows above reused",
              v.d.cross_attention ? "2. The cross-attention cache" : "2. The KV cache");
  const int outlined = v.d.cross_attention ? -1 : v.t;
  const auto stack = [&](const Matrix& m, std::string name, bool joined) {
    const Matrix& rows = *sec.owned.emplace_back(std::make_unique<Matrix>(m.topRows(v.cache_rows)));
    add_term(sec, {.name = std::move(name),
                   .m = &rows,
                   .rows = &v.cached,
                   .highlight_row = outlined,
                   .flags = kVectors,
                   .joined = joined});
  };
  if (v.d.attention.variant == Variant::Mla) {
    stack(v.d.cache.latent, "latent cache", false);
    if (v.d.cache.k_r.size() > 0) stack(v.d.cache.k_r, "k_r cache (turned)", true);
  } else {
    const std::string turned = v.d.attention.positions == Positions::Rope ? " (turned)" : "";
    for (std::size_t g = 0; g < v.d.cache.k.size(); ++g) {
      stack(v.d.cache.k[g], "K" + turned + ", KV head " + std::to_string(g), false);
      stack(v.d.cache.v[g], "V, KV head " + std::to_string(g), true);
    }
  }
  return sec;
}

// Sparse attention: the new token's indexer scores every cached token against the indexer's own cached keys, then
// its heads read only the top k. The key cache is drawn here, where it is read, as the first term of the scan.
Section indexer_section(const Shown& v) {
  const int k = v.d.attention.sparse->top_k;
  Section sec = section("indexer",
                        "3. The indexer scores its " + plural(v.s.cache_tokens, "cached key") +
                            "; the heads then read only the top " + std::to_string(k),
                        "3. The indexer's scan");
  const Matrix& keys = *sec.owned.emplace_back(std::make_unique<Matrix>(v.d.cache.indexer_k.topRows(v.cache_rows)));
  add_term(sec, {.name = "indexer key cache",
                 .m = &keys,
                 .rows = &v.cached,
                 .highlight_row = v.d.cross_attention ? -1 : v.t,
                 .flags = kVectors});
  add_term(sec,
           {.name = "indexer scores", .m = &v.s.indexer_scores, .rows = &v.now, .cols = &v.cached, .flags = kPlain});
  add_term(sec, {.name = "kept (top " + std::to_string(k) + ")",
                 .m = &v.s.selected,
                 .rows = &v.now,
                 .cols = &v.cached,
                 .map = ColourMap::Sequential,
                 .range = ValueRange{0.0, 2.2},
                 .flags = kPlain});
  sec.ops = {"\u2192", "\u2192"};
  return sec;
}

// Each query head's attention over the cache.
Section weights_section(const Shown& v, int number) {
  const AttentionConfig& a = v.d.attention;
  const std::string n = std::to_string(number) + ". ";
  Section sec = section(
      "weights",
      n + "Its attention over the " + (v.d.cross_attention ? "context" : "cached tokens") + ", one row per query head",
      n + "Its attention over the " + (v.d.cross_attention ? "context" : "cache"));
  const bool grouped = a.variant == Variant::Gqa || a.variant == Variant::Mqa;
  for (std::size_t h = 0; h < v.s.weights.size(); ++h) {
    const std::string kv = grouped ? " (KV " + std::to_string(kv_head_for(a, static_cast<int>(h))) + ")" : "";
    add_term(sec, {.name = "head " + std::to_string(h) + kv,
                   .m = &v.s.weights[h],
                   .rows = &v.now,
                   .cols = &v.cached,
                   .map = ColourMap::Sequential,
                   .range = ValueRange{0, 1},
                   .flags = kPlain});
  }
  return sec;
}

// The output row, beside the same row of the trace computed all at once, and whether they agree.
Section output_section(const Shown& v, int number) {
  const std::string n = std::to_string(number) + ". The output row";
  Section sec = section("output", n, n);
  const Matrix& reference = *sec.owned.emplace_back(std::make_unique<Matrix>(v.full.output.row(v.t)));
  const double diff = (v.s.output - reference).cwiseAbs().maxCoeff();
  const std::string of_trace = v.d.cross_attention ? "' of the full trace" : "' of the full causal trace";
  add_term(sec, {.name = "output of '" + v.s.token + "'", .m = &v.s.output, .rows = &v.now, .flags = kVectors});
  add_term(sec, {.name = "row '" + v.s.token + of_trace, .m = &reference, .rows = &v.now, .flags = kVectors});
  sec.ops = {"="};
  if (v.d.cross_attention) {
    sec.badge =
        agreement(diff, "The same numbers as computing every token at once",
                  ": the context does not change while the decoder writes, so its keys and values are computed once.");
    return sec;
  }
  const std::string all = v.t == 0 ? std::string("the whole sequence") : "all " + std::to_string(v.t + 1) + " tokens";
  sec.badge = agreement(diff, "The same numbers as computing " + all + " at once",
                        ": earlier tokens' keys and values never change, so they can be kept.");
  return sec;
}

std::vector<Section> sections(const Shown& v) {
  std::vector<Section> all;
  all.push_back(query_section(v));
  all.push_back(cache_section(v));
  if (v.d.attention.sparse) all.push_back(indexer_section(v));
  all.push_back(weights_section(v, static_cast<int>(all.size()) + 1));
  all.push_back(output_section(v, static_cast<int>(all.size()) + 1));
  return all;
}

// Cell edges tried, in body font heights, largest first, down to the smallest that still holds a line of the cells'
// digits (in presentation mode their font is larger than the body's).
constexpr float kCellEms[] = {1.8f, 1.6f, 1.4f, 1.2f};
float cell_edge(std::size_t candidate) {
  return std::max(kCellEms[candidate] * ImGui::GetFontSize(), 1.08f * cell_font_size());
}

// The section a lesson page on this view talks about (0-based), or -1.
int page_focus(const AppState& state) {
  if (!state.lesson.open() || state.view != View::Decode) return -1;
  const LessonPage& p = state.lesson.current_page();
  return p.view == View::Decode ? p.decode_section - 1 : -1;
}

// How the sections fit below the cursor: the heights of each, folded and open at every cell tried.
SectionFit fit(const AppState& state, const std::vector<Section>& all) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float width = ImGui::GetContentRegionAvail().x, line = ImGui::GetTextLineHeightWithSpacing();
  const float rule = style.ItemSpacing.y;  // a separator
  SectionFitInput in;
  in.top = ImGui::GetCursorPosY();
  in.view_h = ImGui::GetWindowHeight() - style.WindowPadding.y - 4;  // a little spare for rounding
  in.focus = page_focus(state);
  if (in.focus >= 0) in.focus_last = state.lesson.current_page().decode_last_section - 1;
  in.preferred = 1;  // the cache, what every page of the view is about
  for (std::size_t i = 0; i < all.size(); ++i) {
    in.folded_h.push_back(rule + line);
    in.forced_open.push_back((state.decode.unfolded >> i) & 1u);
  }
  for (std::size_t c = 0; c < std::size(kCellEms); ++c) {
    std::vector<float>& open = in.open_h.emplace_back();
    for (const Section& sec : all) {
      float h = rule + static_cast<float>(WrapAtSpaces(sec.heading, width).size()) * line +
                EquationFlowHeight(sec.terms, sec.ops, cell_edge(c), width);
      if (sec.badge) h += static_cast<float>(WrapAtSpaces(sec.badge->text, width).size()) * line;
      open.push_back(h);
    }
  }
  return fit_sections(in);
}

// A section open, or folded to its heading with a button that opens it.
void draw_section(DecodeView& view, const Section& sec, std::size_t index, bool open, float cell) {
  ImGui::Separator();
  if (!open) {
    ImGui::TextDisabled("%s", sec.folded.c_str());
    ImGui::SameLine();
    if (ImGui::SmallButton(("show##" + sec.id).c_str())) view.unfolded |= 1u << index;
    return;
  }
  TextDisabledWrapped(sec.heading);
  EquationFlow(sec.id.c_str(), sec.terms, sec.ops, cell);
  if (sec.badge) AgreementBadge(*sec.badge);
}

// A page just opened: scrolled to what it shows over a few frames, as the fonts and heights settle.
void settle_scroll(DecodeView& view, float scroll) {
  if (view.scroll_to_section == 0) return;
  ImGui::SetScrollY(scroll);
  if (view.scroll_frames == 0) view.scroll_frames = 5;
  if (--view.scroll_frames == 0) view.scroll_to_section = 0;
}

}  // namespace

void DecodePanel(AppState& state, ImVec2 pos, ImVec2 size) {
  BeginPanel("Decode", pos, size);
  const DecodeTrace* d = state.decoded();
  if (!d) {
    TextWrappedAtSpaces("This scenario cannot be decoded token by token: " + state.decode_error(),
                        ImGui::GetColorU32(ImGuiCol_TextDisabled));
    ImGui::End();
    return;
  }
  decode_controls(state, *d);
  const int t = state.decode.token;
  const DecodeStep& s = d->steps[static_cast<std::size_t>(t)];
  counters(*d, s);
  const int cache_rows = d->cross_attention ? s.cache_tokens : t + 1;
  const Shown v{
      *d,       s,          state.causal_trace(),
      t,        cache_rows, std::vector<std::string>(d->cached_tokens.begin(), d->cached_tokens.begin() + cache_rows),
      {s.token}};
  // Cells shrink, then sections the page does not talk about fold, before anything it does leaves the panel.
  const std::vector<Section> all = sections(v);
  const SectionFit f = fit(state, all);
  settle_scroll(state.decode, f.scroll);
  const float cell = cell_edge(f.cell);
  for (std::size_t i = 0; i < all.size(); ++i) draw_section(state.decode, all[i], i, f.open[i], cell);
  ImGui::End();
}

}  // namespace attn::ui
