// Decoding token by token: the new token's query, the cache as a stack of rows that grows by one each
// step, the attention row over the cache, and the output row, which equals row t of the causal trace.
#include <algorithm>

#include "core/memory.h"
#include "core/text_format.h"
#include "ui/logic/hover_text.h"
#include "ui/panels/panels.h"
#include "ui/widgets/equation.h"
#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"

namespace attn::ui {
namespace {

void controls(AppState& state, const DecodeTrace& d) {
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
  float cell;  // one cell size for every section, big enough for a number; the sections wrap and the panel scrolls
};

constexpr HeatmapFlags kPlain = HeatmapFlags_NoTooltip | HeatmapFlags_NoLegend;

// A numbered section's heading; the one a lesson page talks about is scrolled to the top once.
void section(DecodeView& view, int number, const std::string& text) {
  ImGui::Separator();
  if (number == view.scroll_to_section) {
    ImGui::SetScrollHereY(0.0f);
    view.scroll_to_section = 0;
  }
  TextDisabledWrapped(text);
}

// The new token's query, per head: the only query computed this step.
void query_section(const Shown& v) {
  std::vector<Matrix> queries;
  // With rope the query as it attends: turned by its position (mla: [q | q_r]).
  for (const HeadTrace& h : v.full.heads) queries.push_back(h.scored_q().row(v.t));
  std::vector<Term> terms;
  std::vector<std::string> spaces;
  for (std::size_t h = 0; h < queries.size(); ++h) {
    const std::string q = v.d.attention.positions == Positions::Rope ? "q (turned), head " : "q, head ";
    terms.push_back({.name = q + std::to_string(h), .m = &queries[h], .rows = &v.now, .flags = kPlain});
    if (h > 0) spaces.push_back(" ");
  }
  EquationFlow("queries", terms, spaces, v.cell);
}

// The cache: every row so far, the new one outlined.
void cache_section(const Shown& v) {
  const bool mla = v.d.attention.variant == Variant::Mla;
  std::vector<Matrix> stacks;
  std::vector<std::string> names;
  if (mla) {
    stacks.push_back(v.d.cache.latent.topRows(v.cache_rows));
    names.push_back("latent cache");
    if (v.d.cache.k_r.size() > 0) {
      stacks.push_back(v.d.cache.k_r.topRows(v.cache_rows));
      names.push_back("k_r cache (turned)");
    }
  } else {
    for (std::size_t g = 0; g < v.d.cache.k.size(); ++g) {
      stacks.push_back(v.d.cache.k[g].topRows(v.cache_rows));
      stacks.push_back(v.d.cache.v[g].topRows(v.cache_rows));
      const std::string turned = v.d.attention.positions == Positions::Rope ? " (turned)" : "";
      names.push_back("K cache" + turned + ", KV head " + std::to_string(g));
      names.push_back("V cache, KV head " + std::to_string(g));
    }
  }
  if (v.d.attention.sparse) {
    stacks.push_back(v.d.cache.indexer_k.topRows(v.cache_rows));
    names.push_back("indexer key cache");
  }
  std::vector<Term> terms;
  std::vector<std::string> spaces;
  for (std::size_t i = 0; i < stacks.size(); ++i) {
    terms.push_back({.name = names[i],
                     .m = &stacks[i],
                     .rows = &v.cached,
                     .highlight_row = v.d.cross_attention ? -1 : v.t,
                     .flags = kPlain});
    if (i > 0) spaces.push_back(" ");
  }
  EquationFlow("cache", terms, spaces, v.cell);
}

// Sparse attention: the new token's indexer scores every cached token, then its heads read only the top k.
void indexer_section(const Shown& v) {
  const Term terms[] = {
      {.name = "indexer scores", .m = &v.s.indexer_scores, .rows = &v.now, .cols = &v.cached, .flags = kPlain},
      {.name = "kept (top " + std::to_string(v.d.attention.sparse->top_k) + ")",
       .m = &v.s.selected,
       .rows = &v.now,
       .cols = &v.cached,
       .map = ColorMap::Sequential,
       .range = ValueRange{0.0, 2.2},
       .flags = kPlain}};
  const std::string op[] = {"\u2192"};
  EquationFlow("indexer", terms, op, v.cell);
}

// Each query head's attention over the cache.
void weights_section(const Shown& v) {
  const AttentionConfig& a = v.d.attention;
  const bool grouped = a.variant == Variant::Gqa || a.variant == Variant::Mqa;
  std::vector<Term> rows;
  std::vector<std::string> spaces;
  for (std::size_t h = 0; h < v.s.weights.size(); ++h) {
    const std::string kv = grouped ? " (KV " + std::to_string(kv_head_for(a, static_cast<int>(h))) + ")" : "";
    rows.push_back({.name = "head " + std::to_string(h) + kv,
                    .m = &v.s.weights[h],
                    .rows = &v.now,
                    .cols = &v.cached,
                    .map = ColorMap::Sequential,
                    .range = ValueRange{0, 1},
                    .flags = kPlain});
    if (h > 0) spaces.push_back(" ");
  }
  EquationFlow("weights", rows, spaces, v.cell);
}

// The output row, beside the same row of the trace computed all at once, and whether they agree.
void output_section(const Shown& v) {
  const Matrix reference = v.full.output.row(v.t);
  const double diff = (v.s.output - reference).cwiseAbs().maxCoeff();
  const std::string of_trace = v.d.cross_attention ? "' of the full trace" : "' of the full causal trace";
  const Term out[] = {{.name = "output of '" + v.s.token + "'", .m = &v.s.output, .rows = &v.now, .flags = kPlain},
                      {.name = "row '" + v.s.token + of_trace, .m = &reference, .rows = &v.now, .flags = kPlain}};
  const std::string eq[] = {"="};
  EquationFlow("output", out, eq, v.cell);
  if (v.d.cross_attention) {
    AgreementBadge(
        agreement(diff, "The same numbers as computing every token at once",
                  ": the context does not change while the decoder writes, so its keys and values are computed once."));
    return;
  }
  const std::string all = v.t == 0 ? std::string("the whole sequence") : "all " + std::to_string(v.t + 1) + " tokens";
  AgreementBadge(agreement(
      diff, "The same numbers as computing " + all + " at once",
      ": a new token never changes how earlier tokens were processed, so their keys and values can be kept."));
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
  controls(state, *d);
  const int t = state.decode.token;
  const DecodeStep& s = d->steps[static_cast<std::size_t>(t)];
  counters(*d, s);
  const int cache_rows = d->cross_attention ? s.cache_tokens : t + 1;
  const Shown v{*d,
                s,
                state.causal_trace(),
                t,
                cache_rows,
                std::vector<std::string>(d->cached_tokens.begin(), d->cached_tokens.begin() + cache_rows),
                {s.token},
                1.8f * ImGui::GetFontSize()};
  const bool cross = d->cross_attention;
  section(state.decode, 1, "1. The new token's query, one row per query head (earlier queries are never needed again)");
  query_section(v);
  section(state.decode, 2,
          cross ? "2. The cross-attention cache: the context's keys and values, computed once before the first token "
                  "and read by every new one"
                : "2. The KV cache after this step: the outlined row was just appended; the rows above were computed "
                  "once and reused");
  cache_section(v);
  int next = 3;
  if (d->attention.sparse) {
    section(state.decode, next++,
            std::to_string(3) + ". The indexer scores all " + plural(s.cache_tokens, "cached token") +
                ", and the heads then read only the top " + std::to_string(d->attention.sparse->top_k));
    indexer_section(v);
  }
  section(state.decode, next,
          std::to_string(next) + ". Its attention over the " + (cross ? "context" : "cached tokens") +
              ", one row per query head");
  weights_section(v);
  ++next;
  section(state.decode, next, std::to_string(next) + ". The output row");
  output_section(v);
  ImGui::End();
}

}  // namespace attn::ui
