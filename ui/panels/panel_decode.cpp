// Decoding token by token: the new token's query, the cache as a stack of rows that grows by one each
// step, the attention row over the cache, and the output row, which equals row t of the causal trace.
#include <algorithm>

#include "core/memory.h"
#include "ui/widgets/equation.h"
#include "ui/logic/hover_text.h"
#include "ui/panels/panels.h"
#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"
#include "core/text_format.h"

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
  const std::string per_token = a.variant == Variant::Mla
                                    ? "the latent, " + std::to_string(a.latent_dim) + " numbers"
                                    : "2 \u00D7 " + std::to_string(kv_head_count(a)) + " KV head" +
                                          (kv_head_count(a) == 1 ? "" : "s") + " \u00D7 " + std::to_string(a.head_dim) +
                                          " = " + std::to_string(d.elements_per_token) + " numbers";
  const std::string text = std::string(d.cross_attention ? "Cached once, before the first token: the context's " : "Cached: ") +
                           std::to_string(s.cache_tokens) + (s.cache_tokens == 1 ? " token" : " tokens") + " \u00D7 (" + per_token +
                           ") = " + thousands(s.cache_elements) + " numbers in this layer = " + thousands(s.cache_elements * 2) +
                           " bytes in bf16, " + thousands(s.cache_elements * 4) + " in fp32. " +
                           (d.cross_attention ? "A new token adds nothing to it: it only reads it."
                                              : "Each new token adds " + std::to_string(d.elements_per_token) + " more.");
  TextWrappedAtSpaces(text, accent_colour());
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
  const Trace& full = state.causal_trace();
  const AttentionConfig& a = d->attention;
  // Self-attention caches the tokens so far; cross-attention the whole context, from the first token on.
  const int cache_rows = d->cross_attention ? s.cache_tokens : t + 1;
  const std::vector<std::string> cached(d->cached_tokens.begin(), d->cached_tokens.begin() + cache_rows);
  const std::vector<std::string> now{s.token};
  // One cell size for every section, big enough for a number; the sections wrap and the panel scrolls.
  const float cell = 1.8f * ImGui::GetFontSize();
  int number = 0;
  auto section = [&](const char* text) {
    ImGui::Separator();
    if (++number == state.decode.scroll_to_section) {  // the section a lesson page talks about, at the top
      ImGui::SetScrollHereY(0.0f);
      state.decode.scroll_to_section = 0;
    }
    TextDisabledWrapped(text);
  };

  // The new token's query, per head: the only query computed this step.
  section("1. The new token's query, one row per query head (earlier queries are never needed again)");
  std::vector<Matrix> queries;
  for (const HeadTrace& h : full.heads) queries.push_back(h.q.row(t));
  std::vector<Term> q_terms;
  std::vector<std::string> spaces;
  for (std::size_t h = 0; h < queries.size(); ++h) {
    q_terms.push_back({.name = "q, head " + std::to_string(h), .m = &queries[h], .rows = &now, .flags = HeatmapFlags_NoTooltip | HeatmapFlags_NoLegend});
    if (h > 0) spaces.push_back(" ");
  }
  EquationFlow("queries", q_terms, spaces, cell);

  // The cache: every row so far, the new one outlined.
  section(d->cross_attention ? "2. The cross-attention cache: the context's keys and values, computed once before the first token and read by every new one"
                             : "2. The KV cache after this step: the outlined row was just appended; the rows above were computed once and reused");
  std::vector<Matrix> stacks;
  std::vector<Term> terms;
  std::vector<std::string> ops;
  if (a.variant == Variant::Mla) {
    stacks.push_back(d->cache.latent.topRows(cache_rows));
  } else {
    for (std::size_t g = 0; g < d->cache.k.size(); ++g) {
      stacks.push_back(d->cache.k[g].topRows(cache_rows));
      stacks.push_back(d->cache.v[g].topRows(cache_rows));
    }
  }
  for (std::size_t i = 0; i < stacks.size(); ++i) {
    const std::string name = a.variant == Variant::Mla ? "latent cache"
                                                        : std::string(i % 2 == 0 ? "K" : "V") + " cache, KV head " + std::to_string(i / 2);
    terms.push_back({.name = name, .m = &stacks[i], .rows = &cached, .highlight_row = d->cross_attention ? -1 : t,
                     .flags = HeatmapFlags_NoTooltip | HeatmapFlags_NoLegend});
    if (i > 0) ops.push_back(" ");
  }
  EquationFlow("cache", terms, ops, cell);

  // Each query head's attention over the cache.
  section(d->cross_attention ? "3. Its attention over the context, one row per query head" : "3. Its attention over the cached tokens, one row per query head");
  std::vector<Term> rows;
  std::vector<std::string> row_ops;
  for (std::size_t h = 0; h < s.weights.size(); ++h) {
    rows.push_back({.name = "head " + std::to_string(h) + (a.variant == Variant::Gqa || a.variant == Variant::Mqa
                                                                ? " (KV " + std::to_string(kv_head_for(a, static_cast<int>(h))) + ")"
                                                                : ""),
                    .m = &s.weights[h], .rows = &now, .cols = &cached, .map = ColorMap::Sequential, .range = ValueRange{0, 1},
                    .flags = HeatmapFlags_NoTooltip | HeatmapFlags_NoLegend});
    if (h > 0) row_ops.push_back(" ");
  }
  EquationFlow("weights", rows, row_ops, cell);

  section("4. The output row");
  const Matrix reference = full.output.row(t);
  const double diff = (s.output - reference).cwiseAbs().maxCoeff();
  const Term out[] = {{.name = "output of '" + s.token + "'", .m = &s.output, .rows = &now, .flags = HeatmapFlags_NoTooltip | HeatmapFlags_NoLegend},
                      {.name = "row '" + s.token + (d->cross_attention ? "' of the full trace" : "' of the full causal trace"), .m = &reference, .rows = &now,
                       .flags = HeatmapFlags_NoTooltip | HeatmapFlags_NoLegend}};
  const std::string eq[] = {"="};
  EquationFlow("output", out, eq, cell);
  if (d->cross_attention)
    AgreementBadge(agreement(diff, "The same numbers as computing every token at once",
                             ": the context does not change while the decoder writes, so its keys and values are computed once."));
  else
    AgreementBadge(agreement(diff, "The same numbers as computing " + (t == 0 ? std::string("the whole sequence") : "all " + std::to_string(t + 1) + " tokens") + " at once",
                             ": a new token never changes how earlier tokens were processed, so their keys and values can be kept."));
  ImGui::End();
}

}  // namespace attn::ui
