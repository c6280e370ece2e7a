// The pipeline: a strip with every step as a thumbnail, and the current step drawn large as its equation.
#include <algorithm>
#include <array>
#include <cmath>
#include <tuple>
#include <utility>

#include "core/mask.h"
#include "core/positions.h"
#include "core/text_format.h"
#include "ui/logic/focus.h"
#include "ui/logic/hover_text.h"
#include "ui/logic/layout_check.h"
#include "ui/logic/recompute.h"
#include "ui/logic/step_matrices.h"
#include "ui/logic/step_text.h"
#include "ui/panels/panels.h"
#include "ui/widgets/equation.h"
#include "ui/widgets/layout_check_frame.h"
#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"

namespace attn::ui {
namespace {

const std::vector<std::string>& dim_labels(Eigen::Index n, std::vector<std::string>& storage) {
  storage.clear();
  for (Eigen::Index i = 0; i < n; ++i) storage.push_back(std::to_string(i));
  return storage;
}

// Everything one frame of the step view needs, so each step is a short function.
// Weights are a distribution (viridis, 0..1) unless a linear-kernel row has negative ones: then they are
// signed numbers and take the diverging map, so a negative weight never looks like zero.
std::pair<ColourMap, std::optional<ValueRange>> weights_colouring(const HeadTrace& h) {
  const bool signed_rows = std::find(h.row_status.begin(), h.row_status.end(), RowStatus::Signed) != h.row_status.end();
  if (signed_rows) return {ColourMap::Diverging, std::nullopt};
  return {ColourMap::Sequential, ValueRange{0, 1}};
}

struct StepView {
  AppState& state;
  const Trace& t;
  const HeadTrace& h;
  float height;  // for the equations
  float top;     // the cursor's y where the step began: what a step draws above its equation comes off `height`
  bool first_equation = true;  // the next equation is the step's own formula, not one drawn after it

  const HoverCell& last() const { return state.pipeline.last_hover; }
  // A (query, key) matrix of this head: rows the tokens, columns the context's tokens, `cell` selected.
  Term query_by_key(std::string name, const Matrix& m, std::pair<int, int> cell) const {
    return {.name = std::move(name),
            .m = &m,
            .rows = &t.tokens,
            .cols = &t.context_tokens,
            .selected_row = cell.first,
            .selected_col = cell.second};
  }
  // The same with the head's mask: its hidden cells hatched.
  Term masked_by_key(std::string name, const Matrix& m, std::pair<int, int> cell) const {
    Term term = query_by_key(std::move(name), m, cell);
    term.visible = &*h.mask;
    return term;
  }
  // A lesson page's cells of this step's result, or none when the step shown is not the page's.
  std::span<const std::pair<int, int>> outlined() const {
    return state.pipeline.step == state.pipeline.outlined_step
               ? std::span<const std::pair<int, int>>(state.pipeline.outlined)
               : std::span<const std::pair<int, int>>();
  }

  // Draws one equation and records a hover on it. Without a pointer on it, a pinned cell (--cell) stands in
  // for a hover on the result term, so captures can show a cell's arithmetic.
  EquationHover equation(int index, std::span<const Term> given, std::span<const std::string> ops, float max_height) {
    // A lesson page's cells are outlined on the step's result, wherever it stands in the equation.
    std::vector<Term> terms(given.begin(), given.end());
    const Matrix* result_m = step_result(t, state.pipeline.step, state.pipeline.head).m;
    for (Term& term : terms)
      if (term.m == result_m || (term.whole && term.whole == result_m)) term.outlined = outlined();
    const bool own_formula = std::exchange(first_equation, false);
    EquationHover e = Equation(("eq" + std::to_string(index)).c_str(), terms, ops, max_height);
    // A row starting at y (in the step's window) is in sight with two lines of it above the bottom edge.
    const float in_sight = ImGui::GetWindowHeight() - 2 * ImGui::GetTextLineHeightWithSpacing();
    // What the step makes must be in sight: a picture of its operands alone shows nothing of the step. (A formula
    // drawn after the step's own, such as what sparsity lost under the selection, may wait below.)
    if (own_formula && !ops.empty() && ops.back() == "=" && e.result_y >= 0) {
      NoteInSight(SightKind::Result, terms.back().name, "the result " + terms.back().name, e.result_min, e.result_max);
      for (std::size_t k = 0; k + 1 < terms.size() && k < e.boxes.size(); ++k)
        NoteInSight(SightKind::Operand, terms[k].name, "the operand " + terms[k].name + " of " + terms.back().name,
                    e.boxes[k].first, e.boxes[k].second);
    }
    // When a lesson page opens, the step shows from its top if that shows the page's outlined cell, its matrix's
    // title with it; otherwise the cell in the middle. Measured from the content's top: the previous page may have
    // left the step scrolled.
    if (state.pipeline.scroll_to_outlined && e.outlined_y >= 0) {
      const float y = e.outlined_y - ImGui::GetWindowPos().y + ImGui::GetScrollY(), h = ImGui::GetWindowHeight();
      ImGui::SetScrollY(y > in_sight ? y - h * 0.5f : 0.0f);
      state.pipeline.scroll_to_outlined = false;
    }
    const int result = static_cast<int>(terms.size()) - 1;
    if (!e && state.pipeline.pinned_cell && state.pipeline.pinned_cell->first < terms[result].m->rows() &&
        state.pipeline.pinned_cell->second < terms[result].m->cols())
      e = EquationHover{
          .term = result, .row = state.pipeline.pinned_cell->first, .col = state.pipeline.pinned_cell->second};
    if (e) {
      state.pipeline.hover.step = state.pipeline.step;
      state.pipeline.hover.head = state.pipeline.head;
      state.pipeline.hover.equation = index;
      state.pipeline.hover.term = e.term;
      state.pipeline.hover.row = e.row;
      state.pipeline.hover.col = e.col;
    }
    return e;
  }
  // The cell of `term` hovered last frame in equation `eq` of this step, or -1s.
  std::pair<int, int> hovered(int eq, int term) const {
    return last().on(state.pipeline.step, eq, term) ? std::pair{last().row, last().col} : std::pair{-1, -1};
  }
};

void inputs(StepView& v) {
  std::vector<Term> terms{{.name = "X", .m = &v.t.x, .rows = &v.t.tokens}};
  if (v.t.cross_attention) terms.push_back({.name = "X_kv (context)", .m = &v.t.x_kv, .rows = &v.t.context_tokens});
  const std::vector<std::string> ops(terms.size() > 1 ? 1 : 0, "   ");
  const EquationHover e = v.equation(0, terms, ops, v.height);
  if (e) v.state.pipeline.hover.explanation = explain_cell(v.t, Step::Inputs, v.state.pipeline.head, e.row, e.col);
}

// One projection of the step: input · weight = result, and what hovering its result explains.
struct Projection {
  std::string label;  // the radio button
  const Matrix* in;
  std::string in_name;
  Matrix weight;
  std::string w_name, out_name;
  const Matrix* out;
  const std::vector<std::string>* rows;
  char which;  // for explain_projection
};

std::vector<Projection> projection_list(const StepView& v) {
  const Trace& t = v.t;
  const AttentionConfig& a = t.attention;
  const int d = a.head_dim, h = v.state.pipeline.head, g = v.h.kv_head;
  const bool mla = a.variant == Variant::Mla;
  const std::string hs = std::to_string(h), gs = std::to_string(mla ? h : g);
  auto per_head = [&](const std::string& name, const std::string& index) {  // one head needs no index
    return a.heads == 1 ? name : name + "^(" + index + ")";
  };
  // With absolute positions the projections read X + P.
  const std::string plus_p = t.positions.size() > 0 ? " + P" : "";
  const std::string x_kv = (t.cross_attention ? "X_kv" : "X") + plus_p;
  std::vector<Projection> list;
  if (mla)  // the one thing MLA caches comes first
    list.push_back({"latent = " + x_kv + " \u00B7 W_DKV  (cached)", &t.input_kv(), x_kv, *t.weights.W_DKV, "W_DKV",
                    "latent", &t.latent, &t.context_tokens, 'c'});
  const bool q_latent = t.weights.W_UQ.has_value();
  const Matrix& W_q = q_latent ? *t.weights.W_UQ : *t.weights.W_Q;
  const std::string q_in = q_latent ? "query_latent" : "X" + plus_p, q_w = per_head(q_latent ? "W_UQ" : "W_Q", hs);
  list.push_back({"Q = " + q_in + " \u00B7 " + q_w, q_latent ? &t.query_latent : &t.input(), q_in,
                  W_q.middleCols(h * d, d), q_w, "q_" + hs, &v.h.q, &t.tokens, 'q'});
  const Matrix& W_k = mla ? *t.weights.W_UK : *t.weights.W_K;
  const Matrix& W_v = mla ? *t.weights.W_UV : *t.weights.W_V;
  const int block = mla ? h : g;
  const std::string kv_in = mla ? "latent" : x_kv;
  const std::string k_w = per_head(mla ? "W_UK" : "W_K", gs), v_w = per_head(mla ? "W_UV" : "W_V", gs);
  const Matrix& kv_rows = mla ? t.latent : t.input_kv();
  list.push_back({"K = " + kv_in + " \u00B7 " + k_w, &kv_rows, kv_in, W_k.middleCols(block * d, d), k_w, "k_" + gs,
                  &v.h.k, &t.context_tokens, 'k'});
  list.push_back({"V = " + kv_in + " \u00B7 " + v_w, &kv_rows, kv_in, W_v.middleCols(block * d, d), v_w, "v_" + gs,
                  &v.h.v, &t.context_tokens, 'v'});
  return list;
}

void projections(StepView& v) {
  const std::vector<Projection> list = projection_list(v);
  // One projection at a time, large enough to read; they are the same computation with different weights.
  int& which = v.state.pipeline.projection;
  which = std::clamp(which, 0, static_cast<int>(list.size()) - 1);
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (i > 0)
      SameLineIfFits(ImGui::GetFrameHeight() + LabelledWidth(0, list[i].label.c_str()),
                     ImGui::GetStyle().ItemSpacing.x);
    if (ImGui::RadioButton(list[i].label.c_str(), which == static_cast<int>(i))) which = static_cast<int>(i);
  }
  const Projection& r = list[static_cast<std::size_t>(which)];
  const auto [hr, hc] = v.hovered(which, 2);
  const Term terms[] = {{.name = r.in_name, .m = r.in, .rows = r.rows, .highlight_row = hr},
                        {.name = r.w_name, .m = &r.weight, .highlight_col = hc},
                        {.name = r.out_name, .m = r.out, .rows = r.rows, .selected_row = hr, .selected_col = hc}};
  const std::string ops[] = {"\u00B7", "="};
  const EquationHover e = v.equation(which, terms, ops, v.height - (ImGui::GetCursorPosY() - v.top));
  if (e.term == 2)
    v.state.pipeline.hover.explanation = explain_projection(v.t, r.which, v.state.pipeline.head, e.row, e.col);
}

// MLA as served: scores straight from the latents through W_UQK, never forming k.
void absorbed_scores(StepView& v) {
  const AbsorbedMla& m = *v.t.absorbed;
  const int h = v.state.pipeline.head;
  const Matrix& query_side = v.t.query_side();
  const Matrix latent_T = v.t.latent.transpose();
  // With decoupled RoPE or a key bias the latent carries only part of each score; q_r k_rᵀ and q·b_K, which no
  // absorption can fold into the latent, add the rest.
  const bool rope = decoupled_rope(v.t.attention), bias = v.t.attention.qkv_bias;
  const bool apart = latent_part_apart(v.t.attention);
  const Matrix& latent_part =
      apart ? m.latent_scores[static_cast<std::size_t>(h)] : m.scores[static_cast<std::size_t>(h)];
  const double diff = (m.scores[static_cast<std::size_t>(h)] - v.h.scores()).cwiseAbs().maxCoeff();
  AgreementBadge(agreement(diff, "agrees with q k\u1D40"));
  // One name for the absorbed matrix everywhere (checkbox, term, lessons): W_UQK = W_UQ W_UKᵀ, or W_Q W_UKᵀ
  // without a query latent.
  const std::string uqk = "W_UQK" + std::string(v.t.heads.size() > 1 ? "^(" + std::to_string(h) + ")" : "");
  const std::string side = v.t.query_latent.size() > 0 ? "query_latent" : v.t.positions.size() > 0 ? "(X + P)" : "X";
  if (rope)
    TextWrappedAtSpaces(
        "scores = latent part + q_r k_r\u1D40: the decoupled RoPE part is added beside the absorbed "
        "one, since the latent is never turned.");
  if (bias)
    TextWrappedAtSpaces("With biases: each query is " + side + " " + uqk +
                        " + b_Q W_UK\u1D40, and scores = latent part + q\u00B7b_K (the key bias, outside the latent: "
                        "one number for each query's row)" +
                        (rope ? " + q_r k_r\u1D40." : "."));
  const float height = v.height - (ImGui::GetCursorPosY() - v.top);
  // Where W_UQK's d_q rows do not fit beside the rest, each token's product with it stands as one term: the
  // (x W_UQK) · c of the lesson, as the server computes it.
  const auto form = [&](bool whole) {
    const int eq = whole ? 1 : 2, result = whole ? 3 : 2;
    const auto [hr, hc] = v.hovered(eq, result);
    std::vector<Term> terms;
    if (whole) {
      terms.push_back(
          {.name = side == "(X + P)" ? "X + P" : side, .m = &query_side, .rows = &v.t.tokens, .highlight_row = hr});
      terms.push_back({.name = uqk, .m = &m.W_UQK[static_cast<std::size_t>(h)]});
    } else {
      terms.push_back({.name = side + " " + uqk,
                       .m = &m.queries[static_cast<std::size_t>(h)],
                       .rows = &v.t.tokens,
                       .highlight_row = hr});
    }
    terms.push_back({.name = "latent\u1D40", .m = &latent_T, .cols = &v.t.context_tokens, .highlight_col = hc});
    terms.push_back({.name = apart ? "latent part" : "scores",
                     .m = &latent_part,
                     .rows = &v.t.tokens,
                     .cols = &v.t.context_tokens,
                     .selected_row = hr,
                     .selected_col = hc});
    const std::vector<std::string> ops =
        whole ? std::vector<std::string>{"\u00B7", "\u00B7", "="} : std::vector<std::string>{"\u00B7", "="};
    return std::pair{terms, ops};
  };
  auto [terms, ops] = form(true);
  // With b_Q, the queries the latent reads are not side · W_UQK alone: they stand as one term.
  const bool whole = !bias && EquationFits(terms, ops, height);
  if (!whole) std::tie(terms, ops) = form(false);
  const EquationHover e = v.equation(whole ? 1 : 2, terms, ops, height);
  if (e.term == static_cast<int>(terms.size()) - 1 && !apart)
    v.state.pipeline.hover.explanation = explain_cell(v.t, Step::Scores, h, e.row, e.col);
}

// A checkbox on the row of the side's radio buttons (after them when `after` and it fits) for a mode that replaces
// the step's equation; turning one mode on turns the other off.
bool mode_toggle(StepView& v, const char* label, bool& on, bool after) {
  if (after) SameLineIfFits(ImGui::GetFrameHeight() + LabelledWidth(0, label), ImGui::GetStyle().ItemSpacing.x * 3);
  if (ImGui::Checkbox(label, &on) && on) {
    v.state.pipeline.shift = v.state.pipeline.naive_rope = v.state.pipeline.geometry = false;
    v.state.pipeline.sparsity_loss = false;
    on = true;
  }
  return on;
}

void geometry(StepView& v) {
  GeometryView(v.state, v.t, v.state.pipeline.head, v.height - (ImGui::GetCursorPosY() - v.top));
}

void scores(StepView& v) {
  if (mode_toggle(v, "geometry: q and k as arrows", v.state.pipeline.geometry, false)) return geometry(v);
  if (v.t.absorbed) {
    ImGui::Checkbox("absorbed form", &v.state.pipeline.show_absorbed);
    ImGui::SameLine();
    TextDisabledWrapped(std::string("scores from the cached latents through W_UQK = ") +
                        (v.t.query_latent.size() > 0 ? "W_UQ" : "W_Q") + " W_UK\u1D40, as MLA is served");
    if (v.state.pipeline.show_absorbed) {
      absorbed_scores(v);
      return;
    }
  }
  // With rope the scores read the turned q and k (mla: [q | q_r] and [k | k_r]).
  const bool rope = v.h.q_rope.size() > 0, mla = decoupled_rope(v.t.attention);
  const Matrix& q = rope ? v.h.q_rope : v.h.q;
  const Matrix kT = (rope ? v.h.k_rope : v.h.k).transpose();
  std::vector<std::string> dims;
  const auto [hr, hc] = v.hovered(0, 2);
  const Term terms[] = {{.name = !rope ? "q"
                                 : mla ? "[q | q_r]"
                                       : "RoPE(q)",
                         .m = &q,
                         .rows = &v.t.tokens,
                         .cols = &dim_labels(q.cols(), dims),
                         .highlight_row = hr},
                        {.name = !rope ? "k\u1D40"
                                 : mla ? "[k | k_r]\u1D40"
                                       : "RoPE(k)\u1D40",
                         .m = &kT,
                         .cols = &v.t.context_tokens,
                         .highlight_col = hc},
                        v.query_by_key("scores", v.h.scores(), {hr, hc})};
  const std::string ops[] = {"\u00B7", "="};
  const EquationHover e = v.equation(0, terms, ops, v.height - (ImGui::GetCursorPosY() - v.top));
  if (e.term == 2)
    v.state.pipeline.hover.explanation = explain_cell(v.t, Step::Scores, v.state.pipeline.head, e.row, e.col);
}

void scale(StepView& v) {
  const auto [hr, hc] = v.hovered(0, 1);
  const Term terms[] = {v.query_by_key("scores", v.h.scores(), {hr, hc}),
                        v.query_by_key("scaled", v.h.scaled(), {hr, hc})};
  const std::string op =
      v.t.attention.scale ? "\u00F7 \u221A" + std::to_string(score_dim(v.t.attention)) + "  =" : "(scale off)  =";
  const EquationHover e = v.equation(0, terms, std::span(&op, 1), v.height);
  if (e.term >= 0)
    v.state.pipeline.hover.explanation = explain_cell(v.t, Step::Scale, v.state.pipeline.head, e.row, e.col);
}

void mask(StepView& v) {
  const auto [hr, hc] = v.hovered(0, 2);
  const bool softmax = v.t.attention.kernel == Kernel::Softmax;
  Term mask = v.masked_by_key("mask", *v.h.mask, {hr, hc});
  mask.map = ColourMap::Sequential;
  mask.range = ValueRange{0.0, 2.2};
  mask.flags = HeatmapFlags_NoTooltip | HeatmapFlags_NoLegend | HeatmapFlags_Clickable;
  const Term terms[] = {v.query_by_key("scaled", v.h.scaled(), {hr, hc}), mask,
                        v.masked_by_key("masked", v.h.masked(), {hr, hc})};
  const std::string ops[] = {softmax ? "with" : "then", "\u2192"};
  const EquationHover e = v.equation(0, terms, ops, v.height);
  if (e) v.state.pipeline.hover.explanation = explain_cell(v.t, Step::Mask, v.state.pipeline.head, e.row, e.col);
  if (e.term == 1 && e.clicked) {
    // Clicking the mask makes it custom (from what it was) and flips the cell. The trace on screen may be an
    // older revision's while a big document computes: the document's own sizes and mask decide.
    const int r = e.row, c = e.col;
    if (r < v.state.scenario().n_q() && c < v.state.scenario().n_kv())
      v.state.edit([&](Scenario& s) {
        if (s.attention.mask != MaskKind::Custom) s.attention.custom_mask = build_mask(s.attention, s.n_q(), s.n_kv());
        s.attention.mask = MaskKind::Custom;
        s.attention.custom_mask(r, c) = s.attention.custom_mask(r, c) == 0.0 ? 1.0 : 0.0;
      });
  }
}

void softmax(StepView& v) {
  if (v.t.attention.kernel == Kernel::Softmax) {
    ImGui::Checkbox("online, block by block (as a GPU computes it)", &v.state.pipeline.online.on);
    if (v.state.pipeline.online.on) {
      OnlineSoftmaxView(v.state, v.t, v.state.pipeline.head, 1.8f * ImGui::GetFontSize());
      return;
    }
  }
  const auto [hr, hc] = v.hovered(0, 1);
  Term masked = v.masked_by_key("masked", v.h.masked(), {hr, hc});
  masked.highlight_row = hr;
  Term weights = v.masked_by_key("weights", v.h.weights(), {hr, hc});
  std::tie(weights.map, weights.range) = weights_colouring(v.h);
  const Term terms[] = {masked, weights};
  const std::string op =
      v.t.attention.kernel == Kernel::Softmax ? "softmax\nby row \u2192" : "\u00F7 row\nsum Z \u2192";
  const EquationHover e =
      v.equation(0, terms, std::span(&op, 1), v.height - 2.2f * ImGui::GetTextLineHeightWithSpacing());
  if (e) v.state.pipeline.hover.explanation = explain_cell(v.t, Step::Softmax, v.state.pipeline.head, e.row, e.col);
  // hr is the previous frame's hover: the trace may have changed size since.
  const int row = e ? e.row : (hr >= 0 && hr < v.t.n_q() ? hr : example_row(v.h));  // the explanation's row
  TextWrappedAtSpaces("Row \"" + v.t.tokens[static_cast<std::size_t>(row)] +
                      "\": " + explain_row_summary(v.t, v.state.pipeline.head, row));
}

void weighted_sum(StepView& v) {
  const auto [hr, hc] = v.hovered(0, 2);
  Term weights = v.masked_by_key("weights", v.h.weights(), {-1, -1});
  std::tie(weights.map, weights.range) = weights_colouring(v.h);
  weights.highlight_row = hr;
  const Term terms[] = {weights,
                        {.name = "v", .m = &v.h.v, .rows = &v.t.context_tokens, .highlight_col = hc},
                        {.name = "output_" + std::to_string(v.state.pipeline.head),
                         .m = &v.h.output,
                         .rows = &v.t.tokens,
                         .selected_row = hr,
                         .selected_col = hc}};
  const std::string ops[] = {"\u00B7", "="};
  const EquationHover e = v.equation(0, terms, ops, v.height);
  if (e.term == 2)
    v.state.pipeline.hover.explanation = explain_cell(v.t, Step::WeightedSum, v.state.pipeline.head, e.row, e.col);
}

// One colour scale for matrices that are compared or added, so a head never looks as strong as the sum;
// only the last term carries the legend.
void share_range(std::vector<Term>& terms) {
  double a = 0;
  for (const Term& t : terms) a = std::max(a, t.m->cwiseAbs().maxCoeff());
  for (Term& t : terms) {
    t.range = ValueRange{-std::max(a, 1e-12), std::max(a, 1e-12)};
    if (&t != &terms.back()) t.flags |= HeatmapFlags_NoLegend;
  }
}

void head_outputs(StepView& v) {
  std::vector<Term> terms;
  std::vector<std::string> ops;
  // The step's result is concat: head h shows its columns from h·d on.
  const int d = v.t.attention.head_dim;
  for (const HeadTrace& h : v.t.heads) {
    const auto [hr, hc] = v.hovered(0, h.head);
    terms.push_back({.name = "head " + std::to_string(h.head),
                     .m = &h.output,
                     .rows = &v.t.tokens,
                     .selected_row = hr,
                     .selected_col = hc,
                     .outlined = v.outlined(),
                     .outlined_col0 = h.head * d});
    if (h.head > 0) ops.push_back(" ");
  }
  share_range(terms);
  const EquationHover e = v.equation(0, terms, ops, v.height);
  if (e) {
    v.state.pipeline.hover.explanation = explain_cell(v.t, Step::HeadOutputs, e.term, e.row, e.col);
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) v.state.set_head(e.term);
  }
}

// A matrix of a step as drawn: whole, or focused on the rows and columns a lesson page names (the others elided).
struct FocusedTerm {
  std::vector<int> rows, cols;  // slots (ui/logic/focus.h); empty: whole
  Matrix m;
  std::vector<std::string> row_labels, col_labels;
};

// The page's focus on matrix `name` of the shown step, at most `drop` rows and columns fewer than it has.
FocusedTerm focus_term(const StepView& v, const std::string& name, const Matrix& m,
                       const std::vector<std::string>* rows, const std::vector<std::string>* cols, int drop) {
  FocusedTerm f;
  if (drop <= 0 || v.state.pipeline.step != v.state.pipeline.outlined_step) return f;
  const auto it = std::find_if(v.state.pipeline.focus.begin(), v.state.pipeline.focus.end(),
                               [&](const FocusTerm& t) { return t.name == name; });
  if (it == v.state.pipeline.focus.end()) return f;
  const int n_rows = static_cast<int>(m.rows()), n_cols = static_cast<int>(m.cols());
  if (!it->axes.rows.empty()) f.rows = focus_axis(n_rows, it->axes.rows, n_rows - drop);
  if (!it->axes.cols.empty()) f.cols = focus_axis(n_cols, it->axes.cols, n_cols - drop);
  if (static_cast<int>(f.rows.size()) == n_rows) f.rows.clear();  // nothing elided
  if (static_cast<int>(f.cols.size()) == n_cols) f.cols.clear();
  const auto whole = [](int n) {
    std::vector<int> all(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) all[static_cast<std::size_t>(i)] = i;
    return all;
  };
  const std::vector<int> r = f.rows.empty() ? whole(n_rows) : f.rows, c = f.cols.empty() ? whole(n_cols) : f.cols;
  f.m = focused_matrix(m, r, c);
  f.row_labels = focused_labels(rows, r, "\u22EE");
  f.col_labels = focused_labels(cols, c, "\u22EF");
  return f;
}

// `term` drawing `f` where the focus elides something, with the whole matrix's colours.
void apply_focus(Term& term, const FocusedTerm& f) {
  if (f.rows.empty() && f.cols.empty()) return;
  if (!term.range) term.range = auto_range(*term.m, term.map, term.visible);
  term.whole = term.m;
  term.m = &f.m;
  term.rows = &f.row_labels;
  term.cols = &f.col_labels;
  term.row_slots = f.rows;
  term.col_slots = f.cols;
  term.visible = nullptr;
  // A bar over a column or two says little where every number is written, and would take the room the kept row needs.
  if (f.m.cols() <= 2) term.flags |= HeatmapFlags_NoLegend;
}

// The terms as drawn: whole where every number fits at a readable size, else focused on the rows and columns the
// page names, their neighbours kept as far as they fit, the rest elided. `f` holds what focused terms draw from.
void fit_or_focus(const StepView& v, std::vector<Term>& terms, std::span<const std::string> ops,
                  std::vector<FocusedTerm>& f) {
  const std::vector<Term> whole = terms;
  f.assign(terms.size(), {});
  if (v.state.pipeline.focus.empty()) return;
  Eigen::Index most = 0;
  for (const Term& t : whole) most = std::max({most, t.m->rows(), t.m->cols()});
  for (int drop = 1; drop <= most && !EquationFits(terms, ops, v.height); ++drop) {
    terms = whole;
    for (std::size_t i = 0; i < terms.size(); ++i) {
      f[i] = focus_term(v, whole[i].name, *whole[i].m, whole[i].rows, whole[i].cols, drop);
      apply_focus(terms[i], f[i]);
    }
  }
}

// output = concat · W_O, fitted or focused (multi_head page 5 showed the row "sleeps" of concat and all of W_O below
// the fold).
void concat_product(StepView& v) {
  const auto [hr, hc] = v.hovered(0, 2);
  const Trace& t = v.t;
  std::vector<Term> terms{{.name = "concat", .m = &t.concat, .rows = &t.tokens, .highlight_row = hr},
                          {.name = "W_O", .m = &t.W_O(), .highlight_col = hc},
                          {.name = "output",
                           .m = &t.output,
                           .rows = &t.tokens,
                           .selected_row = hr,
                           .selected_col = hc,
                           .outlined = v.outlined()}};
  const std::string ops[] = {"\u00B7", "="};
  std::vector<FocusedTerm> f;
  fit_or_focus(v, terms, ops, f);
  const EquationHover e = v.equation(0, terms, ops, v.height);
  if (e.term == 2 && e.row >= 0 && e.col >= 0)
    v.state.pipeline.hover.explanation = explain_cell(t, Step::Concat, v.state.pipeline.head, e.row, e.col);
}

void concat(StepView& v) {
  const auto [hr, hc] = v.hovered(0, 1);
  if (v.t.has_output_projection()) {
    concat_product(v);
  } else {
    const Term terms[] = {
        {.name = "concat", .m = &v.t.concat, .rows = &v.t.tokens, .selected_row = hr, .selected_col = hc},
        {.name = "output", .m = &v.t.output, .rows = &v.t.tokens, .selected_row = hr, .selected_col = hc}};
    const std::string op = "= (no W_O)";
    const EquationHover e = v.equation(0, terms, std::span(&op, 1), v.height);
    if (e) v.state.pipeline.hover.explanation = explain_cell(v.t, Step::Concat, v.state.pipeline.head, e.row, e.col);
  }
}

// A real model's twelve heads and more, each contribution too wide for numbers: as fourteen terms they were slivers a
// pixel tall. The followed head's contribution, the other heads' summed and b_O add up to the same output.
void output_of_many_heads(StepView& v) {
  const int followed = v.state.pipeline.head;
  Matrix others = Matrix::Zero(v.t.output.rows(), v.t.output.cols());  // (N_Q, d_model)
  for (const HeadTrace& h : v.t.heads)
    if (h.head != followed) others += h.contribution();
  const SharedMatrix& b_O = v.t.weights.b_O;
  const int result = b_O ? 3 : 2;
  const auto [hr, hc] = v.hovered(0, result);
  std::vector<Term> terms{{.name = "head " + std::to_string(followed),
                           .m = &v.h.contribution(),
                           .rows = &v.t.tokens,
                           .selected_row = hr,
                           .selected_col = hc},
                          {.name = std::to_string(v.t.heads.size() - 1) + " others",
                           .m = &others,
                           .rows = &v.t.tokens,
                           .selected_row = hr,
                           .selected_col = hc}};
  std::vector<std::string> ops{"+"};
  if (b_O) {
    terms.push_back({.name = "b_O", .m = &*b_O, .selected_col = hc});
    ops.push_back("+");
  }
  terms.push_back({.name = "output", .m = &v.t.output, .rows = &v.t.tokens, .selected_row = hr, .selected_col = hc});
  ops.push_back("=");
  share_range(terms);
  const EquationHover e = v.equation(0, terms, ops, v.height);
  if (e && e.row >= 0 && e.col >= 0 && !(b_O && e.term == 2))  // b_O's one row is no token's
    v.state.pipeline.hover.explanation = explain_cell(v.t, Step::Output, followed, e.row, e.col);
}

void output(StepView& v) {
  if (!v.t.has_output_projection()) {
    concat(v);
    return;
  }
  if (v.t.heads.size() > 4 && !HeatmapShowsNumbers(v.h.contribution())) {
    output_of_many_heads(v);
    return;
  }
  std::vector<Term> terms;
  std::vector<std::string> ops;
  // With output_bias the sum has one more term, b_O, the same row added to every token's.
  const SharedMatrix& b_O = v.t.weights.b_O;
  const int heads = static_cast<int>(v.t.heads.size()), result = heads + (b_O ? 1 : 0);
  const auto [hr, hc] = v.hovered(0, result);
  // The sum is cell by cell: a lesson's outlined output cell is outlined in every head's contribution too.
  for (const HeadTrace& h : v.t.heads) {
    terms.push_back({.name = "head " + std::to_string(h.head),
                     .m = &h.contribution(),
                     .rows = &v.t.tokens,
                     .selected_row = hr,
                     .selected_col = hc,
                     .outlined = v.outlined()});
    ops.push_back(h.head + 1 < result ? "+" : "=");
  }
  if (b_O) {
    terms.push_back({.name = "b_O", .m = &*b_O, .selected_col = hc});
    ops.push_back("=");
  }
  terms.push_back({.name = "output", .m = &v.t.output, .rows = &v.t.tokens, .selected_row = hr, .selected_col = hc});
  share_range(terms);
  // Five 4x8 terms of numbers (multi_head page 6) flowed onto lines below the fold: a page may focus.
  std::vector<FocusedTerm> f;
  fit_or_focus(v, terms, ops, f);
  const EquationHover e = v.equation(0, terms, ops, v.height);
  if (e && e.row >= 0 && e.col >= 0 && !(b_O && e.term == heads))  // b_O's one row is no token's
    v.state.pipeline.hover.explanation = explain_cell(v.t, Step::Output, v.state.pipeline.head, e.row, e.col);
}

// Queries or keys: the positions and rope steps act on both sides alike, one shown at a time, large enough to read.
int choose_side(StepView& v, const char* queries, const char* keys) {
  int& side = v.state.pipeline.side;
  if (ImGui::RadioButton(queries, side == 0)) side = 0;
  SameLineIfFits(ImGui::GetFrameHeight() + LabelledWidth(0, keys), ImGui::GetStyle().ItemSpacing.x);
  if (ImGui::RadioButton(keys, side == 1)) side = 1;
  return side;
}

// The shift experiment: the scores with every position shifted against the scores with positions from 0.
void shift_experiment(StepView& v) {
  PositionShiftField(v.state, ImGui::GetFontSize() * 7);
  const std::vector<Matrix>* from_0 = v.state.unshifted_scores();
  if (first_position(v.t.attention) == 0 || !from_0 || from_0->size() != v.t.heads.size()) {
    TextWrappedAtSpaces(first_position(v.t.attention) == 0
                            ? "Shift every position by the same amount and compare the scores with these."
                            : "The shift experiment compares scores up to " + std::to_string(kMaxDecodeTokens) +
                                  " tokens.");
    return;
  }
  const Matrix& before = (*from_0)[static_cast<std::size_t>(v.state.pipeline.head)];
  const ShiftFinding f = explain_shift(v.t.attention, (v.h.scores() - before).cwiseAbs().maxCoeff());
  if (v.t.attention.positions == Positions::Rope) AgreementBadge({f.text, f.same});
  else TextWrappedAtSpaces(f.text);
  const auto [hr, hc] = v.hovered(3, 0);
  const std::string c = std::to_string(first_position(v.t.attention));
  std::vector<Term> terms{v.query_by_key("scores, positions from " + c, v.h.scores(), {hr, hc}),
                          v.query_by_key("scores, positions from 0", before, {hr, hc})};
  share_range(terms);  // one colour scale: a cell that changed changes colour
  const std::string op = "vs";
  v.equation(3, terms, std::span(&op, 1), v.height - (ImGui::GetCursorPosY() - v.top));
}

void positions(StepView& v) {
  const Trace& t = v.t;
  const bool keys = t.cross_attention && choose_side(v, "queries: X + P", "context: X_kv + P") == 1;
  if (mode_toggle(v, "shift experiment", v.state.pipeline.shift, t.cross_attention)) return shift_experiment(v);
  const int n = keys ? t.n_kv() : t.n_q();
  const Matrix p = t.positions.topRows(n);
  const std::vector<std::string>& rows = keys ? t.context_tokens : t.tokens;
  const auto [hr, hc] = v.hovered(keys, 2);
  const std::string kind = t.attention.positions == Positions::Learned ? "W_P rows" : "PE (sinusoidal)";
  const Term terms[] = {
      {.name = keys ? "X_kv" : "X", .m = keys ? &t.x_kv : &t.x, .rows = &rows, .selected_row = hr, .selected_col = hc},
      {.name = kind, .m = &p, .selected_row = hr, .selected_col = hc},
      {.name = keys ? "X_kv + P" : "X + P",
       .m = keys ? &t.input_kv() : &t.input(),
       .rows = &rows,
       .selected_row = hr,
       .selected_col = hc}};
  const std::string ops[] = {"+", "="};
  const EquationHover e = v.equation(keys, terms, ops, v.height - (ImGui::GetCursorPosY() - v.top));
  if (e) v.state.pipeline.hover.explanation = explain_position(t, keys, e.row, e.col);
}

// Why MLA decouples: with the expanded keys turned, the scores the absorbed form can compute from the latent no longer
// match the explicit ones (made with the trace: Computed::naive_rope).
void naive_rope(StepView& v) {
  const std::vector<NaiveRopeMla>* heads = v.state.naive_rope();
  if (v.t.attention.head_dim % 2 != 0) {
    TextWrappedAtSpaces("This needs an even head_dim: RoPE turns pairs of dimensions.");
    return;
  }
  if (!heads || heads->size() != v.t.heads.size()) {
    TextWrappedAtSpaces("Turning the expanded keys is compared up to " + std::to_string(kMaxDecodeTokens) + " tokens.");
    return;
  }
  const NaiveRopeMla& r = (*heads)[static_cast<std::size_t>(v.state.pipeline.head)];
  // Here a difference is the lesson, not a failure: said plainly, without the red cross of a broken check.
  TextWrappedAtSpaces("The absorbed form no longer equals the explicit scores (largest difference " +
                      short_number(r.max_difference) +
                      "): no single W_UQK can carry a turn that depends on the distance.");
  const auto [hr, hc] = v.hovered(2, 1);
  const Term terms[] = {v.query_by_key("RoPE(q) RoPE(k)\u1D40 (explicit)", r.explicit_scores, {hr, hc}),
                        v.query_by_key("absorbed (cannot turn)", r.absorbed_scores, {hr, hc})};
  const std::string op = "\u2260";
  v.equation(2, terms, std::span(&op, 1), v.height - (ImGui::GetCursorPosY() - v.top));
}

void rope(StepView& v) {
  const Trace& t = v.t;
  const bool keys = choose_side(v, "queries", "keys") == 1;
  const bool mla = decoupled_rope(t.attention);
  if (mla && mode_toggle(v, "turn the expanded keys instead", v.state.pipeline.naive_rope, true)) return naive_rope(v);
  if (mode_toggle(v, "shift experiment", v.state.pipeline.shift, true)) return shift_experiment(v);
  if (mode_toggle(v, "geometry", v.state.pipeline.geometry, true)) return geometry(v);
  const auto [hr, hc] = v.hovered(keys, 2);
  const std::string hs = t.heads.size() > 1 ? "_" + std::to_string(v.state.pipeline.head) : "";
  std::vector<std::string> dims;
  if (mla) {
    // MLA turns only the decoupled part; the content part (and the latent behind it) is never turned.
    const Matrix& plain = keys ? v.h.k : v.h.q;
    const Matrix& turned = keys ? v.h.k_r : v.h.q_r;
    const Term terms[] = {
        {.name = keys ? "k" + hs : "q" + hs, .m = &plain, .rows = keys ? &t.context_tokens : &t.tokens},
        {.name = keys ? "k_r (turned)" : "q_r (turned)", .m = &turned, .rows = keys ? &t.context_tokens : &t.tokens},
        {.name = keys ? "[k | k_r]" : "[q | q_r]",
         .m = keys ? &v.h.k_rope : &v.h.q_rope,
         .rows = keys ? &t.context_tokens : &t.tokens,
         .selected_row = hr,
         .selected_col = hc}};
    const std::string ops[] = {"beside", "="};
    const EquationHover e = v.equation(keys, terms, ops, v.height - (ImGui::GetCursorPosY() - v.top));
    if (e.term == 2) v.state.pipeline.hover.explanation = explain_rope(t, v.state.pipeline.head, keys, e.row, e.col);
    return;
  }
  const Matrix angles = rope_angles(rope_spec(t.attention), first_position(t.attention), keys ? t.n_kv() : t.n_q());
  const Term terms[] = {{.name = keys ? "k" + hs : "q" + hs,
                         .m = keys ? &v.h.k : &v.h.q,
                         .rows = keys ? &t.context_tokens : &t.tokens,
                         .highlight_row = hr},
                        {.name = "angle \u03B8 (rad)",
                         .m = &angles,
                         .rows = keys ? &t.context_tokens : &t.tokens,
                         .map = ColourMap::Sequential,
                         .highlight_row = hr},
                        {.name = keys ? "RoPE(k)" : "RoPE(q)",
                         .m = keys ? &v.h.k_rope : &v.h.q_rope,
                         .rows = keys ? &t.context_tokens : &t.tokens,
                         .cols = &dim_labels(v.h.q.cols(), dims),
                         .selected_row = hr,
                         .selected_col = hc}};
  const std::string ops[] = {"turned by", "="};
  const EquationHover e = v.equation(keys, terms, ops, v.height - (ImGui::GetCursorPosY() - v.top));
  if (e.term == 2) v.state.pipeline.hover.explanation = explain_rope(t, v.state.pipeline.head, keys, e.row, e.col);
  if (e.term == 1) v.state.pipeline.hover.explanation = explain_rope_angle(t, keys, e.row, e.col);
}

// The final output beside the dense one and their difference: what attending to only k keys lost.
void sparsity_loss(StepView& v, const Matrix& dense) {
  const Matrix lost = v.t.output - dense;
  ImGui::Spacing();
  TextWrappedAtSpaces("What sparsity lost: the output with the top " + std::to_string(v.t.attention.sparse->top_k) +
                      " keys against the output with every visible key (largest difference " +
                      short_number(lost.cwiseAbs().maxCoeff()) + ").");
  const auto [hr, hc] = v.hovered(1, 2);
  std::vector<Term> terms{
      {.name = "output (sparse)", .m = &v.t.output, .rows = &v.t.tokens, .selected_row = hr, .selected_col = hc},
      {.name = "output (dense)", .m = &dense, .rows = &v.t.tokens, .selected_row = hr, .selected_col = hc},
      {.name = "lost", .m = &lost, .rows = &v.t.tokens, .selected_row = hr, .selected_col = hc}};
  share_range(terms);
  const std::string ops[] = {"\u2212", "="};
  v.equation(1, terms, ops, v.height - (ImGui::GetCursorPosY() - v.top));
}

void selection(StepView& v) {
  const Matrix* dense = v.state.dense_output();
  const bool lost = dense && dense->rows() == v.t.output.rows();
  if (lost && mode_toggle(v, "only what sparsity lost", v.state.pipeline.sparsity_loss, false))
    return sparsity_loss(v, *dense);
  const IndexerTrace& x = *v.t.indexer;
  const auto [hr, hc] = v.hovered(0, 1);
  Term scores = v.query_by_key("I (indexer)", x.scores, {hr, hc});
  const Matrix shown = x.scores.array().isFinite().cast<double>();  // the keys the scenario's mask lets it see
  scores.visible = &shown;
  // The selection only ever picks keys the mask shows, so it is the mask every head attends through from here on
  // (a short title: a long one would push the term onto a line of its own).
  Term selected =
      v.query_by_key("top " + std::to_string(v.t.attention.sparse->top_k) + " = new mask", x.selected, {hr, hc});
  selected.map = ColourMap::Sequential;
  selected.range = ValueRange{0.0, 2.2};
  selected.visible = &x.selected;  // a key not selected is hidden, grey and hatched as on the mask step
  selected.flags = HeatmapFlags_NoLegend;
  const Term terms[] = {scores, selected};
  const std::string op = "largest\nper row \u2192";
  // Room is left for what sparsity lost below, unless a lesson page outlines cells here: then the selection is the
  // page, and it takes the height it needs.
  const float room = v.height - (ImGui::GetCursorPosY() - v.top);
  const EquationHover e = v.equation(0, terms, std::span(&op, 1), v.outlined().empty() ? v.height * 0.55f : room);
  if (e) v.state.pipeline.hover.explanation = explain_cell(v.t, Step::Selection, v.state.pipeline.head, e.row, e.col);
  if (lost) sparsity_loss(v, *dense);
}

void draw_step(StepView& v) {
  switch (applying_step(v.state.pipeline.step, v.t.attention)) {
    case Step::Inputs: inputs(v); break;
    case Step::Positions: positions(v); break;
    case Step::Rope: rope(v); break;
    case Step::Selection: selection(v); break;
    case Step::Projections: projections(v); break;
    case Step::Scores: scores(v); break;
    case Step::Scale: scale(v); break;
    case Step::Mask: mask(v); break;
    case Step::Softmax: softmax(v); break;
    case Step::WeightedSum: weighted_sum(v); break;
    case Step::HeadOutputs: head_outputs(v); break;
    case Step::Concat: concat(v); break;
    case Step::Output: output(v); break;
  }
}

struct StripLabel {
  std::string text;
  float x;  // from the thumbnail's left edge
};

// The labels under thumbnails of width w: numbered where every numbered label fits in its thumbnail and the gaps
// beside it (numbers on some and not others read as steps missing); a long name may also borrow the room a short
// neighbour leaves (softmax beside top-k), but never pass the strip's ends.
std::vector<StripLabel> strip_labels(const std::vector<std::string>& names, float w, float gap) {
  const int n = static_cast<int>(names.size());
  // The gap's half on each side that is the label's own (none past the strip's ends).
  const auto own_left = [&](int i) { return i == 0 ? 0.0f : gap / 2 - 1; };
  const auto own_right = [&](int i) { return i + 1 == n ? 0.0f : gap / 2 - 1; };
  // With more than ten steps (positions, the sparse selection) a single space: "10 output" still fits at 1280 wide.
  const std::string space = n > 10 ? " " : "  ";
  bool numbered = true;
  std::vector<std::string> texts;
  for (int i = 0; i < n; ++i) {
    texts.push_back(std::to_string(i) + space + names[static_cast<std::size_t>(i)]);
    numbered = numbered && ImGui::CalcTextSize(texts.back().c_str()).x <= w + own_left(i) + own_right(i);
  }
  if (!numbered) texts = names;
  std::vector<float> width;
  for (const std::string& text : texts) width.push_back(ImGui::CalcTextSize(text.c_str()).x);
  const auto spare = [&](int j) { return j < 0 || j >= n ? 0.0f : std::max(0.0f, (w - width[j]) / 2); };
  std::vector<StripLabel> labels;
  for (int i = 0; i < n; ++i) {
    const float left = own_left(i) + spare(i - 1), right = own_right(i) + spare(i + 1);
    const std::string text = FitText(texts[static_cast<std::size_t>(i)], w + left + right);
    const float lw = ImGui::CalcTextSize(text.c_str()).x;
    labels.push_back({text, std::clamp((w - lw) / 2, -left, w + right - lw)});
  }
  return labels;
}

void step_strip(AppState& state) {
  const Trace& t = state.trace();
  const std::vector<Step> steps = pipeline_steps(t.attention);
  const int count = static_cast<int>(steps.size());
  // Positions and the sparse selection add steps: narrower gaps keep every name whole at 1280 wide.
  const float gap = count > 10 ? std::min(4.0f, ImGui::GetStyle().ItemSpacing.x) : ImGui::GetStyle().ItemSpacing.x;
  const float w = (ImGui::GetContentRegionAvail().x - gap * static_cast<float>(count - 1)) / static_cast<float>(count);
  // In presentation mode the strip is a row of names: the height goes to the current step's matrices.
  const float thumb_h = state.display.presentation ? 0.0f : std::min(58.0f, w * 0.6f);
  std::vector<std::string> names;
  for (const Step step : steps)  // the linear kernel normalises by the row sum: no softmax
    names.emplace_back(step == Step::Softmax && t.attention.kernel == Kernel::Linear
                           ? std::string("\u00F7 Z")
                           : std::string(step_info(step).label));
  const std::vector<StripLabel> labels = strip_labels(names, w, gap);
  // Each thumbnail at its own place: a label reaching into the gap beside it must not push the rest along.
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  for (int i = 0; i < count; ++i) {
    const StepInfo& info = step_info(steps[static_cast<std::size_t>(i)]);
    if (i > 0) ImGui::SameLine();
    ImGui::SetCursorScreenPos({origin.x + static_cast<float>(i) * (w + gap), origin.y});
    ImGui::PushID(i);
    ImGui::BeginGroup();
    const ImVec2 at = ImGui::GetCursorScreenPos();
    const StepMatrix r = step_result(t, info.step, state.pipeline.head);
    HeatmapOptions o;
    o.map = r.map;
    o.visible = r.visible;
    o.size = {w, thumb_h};
    o.max_cell = 18;
    o.flags = HeatmapFlags_NoLabels | HeatmapFlags_NoLegend | HeatmapFlags_NoValues | HeatmapFlags_NoTooltip |
              HeatmapFlags_Fill;
    if (r.map == ColourMap::Sequential) o.range = ValueRange{0, 1};
    ImGui::SetCursorScreenPos(
        {at.x + std::max(0.0f, (w - std::min(w, 18.0f * static_cast<float>(r.m->cols()))) / 2), at.y});
    if (thumb_h > 0) Heatmap("thumb", *r.m, o);
    ImGui::SetCursorScreenPos({at.x + labels[static_cast<std::size_t>(i)].x, at.y + thumb_h + 2});
    ImGui::TextUnformatted(labels[static_cast<std::size_t>(i)].text.c_str());
    const ImVec2 end{at.x + w, at.y + thumb_h + ImGui::GetTextLineHeight() + 6};
    ImGui::SetCursorScreenPos(at);
    if (ImGui::InvisibleButton("select", {w, end.y - at.y})) state.set_step(i);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", std::string(info.title).c_str());
    ImDrawList* dl = ImGui::GetWindowDrawList();
    if (info.step == applying_step(state.pipeline.step, t.attention))
      dl->AddRect({at.x - 3, at.y - 3}, {end.x + 3, end.y + 1}, accent_colour(), 4.0f, 0, 3.0f);
    else if (ImGui::IsItemHovered())
      dl->AddRect({at.x - 3, at.y - 3}, {end.x + 3, end.y + 1}, ImGui::GetColorU32(ImGuiCol_ButtonHovered), 4.0f, 0,
                  1.5f);
    ImGui::EndGroup();
    ImGui::PopID();
  }
}

}  // namespace

void PipelinePanel(AppState& state, ImVec2 pos, ImVec2 size) {
  BeginPanel("Pipeline", pos, size, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoTitleBar);
  LayerBreadcrumb(state);
  step_strip(state);
  ImGui::Separator();
  const Trace& t = state.trace();
  const StepInfo& info = step_info(applying_step(state.pipeline.step, t.attention));
  const int index = step_index(info.step, t.attention);
  // Mouse users step with these; the keyboard has the arrows and Space.
  ImGui::BeginDisabled(index == 0);
  if (ImGui::ArrowButton("prev", ImGuiDir_Left)) state.set_step(index - 1);
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(index + 1 == step_count(t.attention));
  if (ImGui::ArrowButton("next", ImGuiDir_Right)) state.set_step(index + 1);
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::Button(state.pipeline.playing ? "Pause" : "Play")) state.toggle_play();
  ImGui::SameLine(0, 16);
  // The linear kernel normalises by the row sum: calling that step "softmax" would mislead.
  const bool linear = t.attention.kernel == Kernel::Linear && state.pipeline.step == Step::Softmax;
  ImGui::PushFont(title_font());
  ImGui::Text("%d  %s", index, linear ? "Normalise by the row sum  (weights)" : std::string(info.title).c_str());
  ImGui::PopFont();
  if (t.heads.size() > 1 && info.step != Step::Inputs && info.step != Step::Positions && info.step != Step::Concat &&
      info.step != Step::Output && info.step != Step::HeadOutputs && info.step != Step::Selection) {
    ImGui::SameLine();
    // With shared KV heads every head says which it reads: head 0 reads KV head 0 too.
    const bool grouped =
        std::any_of(t.heads.begin(), t.heads.end(), [](const HeadTrace& h) { return h.kv_head != h.head; });
    ImGui::TextDisabled(
        "   head %d of %zu%s", state.pipeline.head, t.heads.size(),
        grouped ? (" (reads KV head " + std::to_string(t.heads[state.pipeline.head].kv_head) + ")").c_str() : "");
  }
  ImGui::Spacing();
  // With a lesson open its panel takes the explanation's place: the arithmetic of the page's outlined cell
  // goes above the step, where scrolling the matrices cannot take it away.
  if (state.lesson.open() && state.pipeline.pinned_cell && state.pipeline.step == state.pipeline.outlined_step)
    if (const std::string cell = explain_cell(t, state.pipeline.step, state.pipeline.head,
                                              state.pipeline.pinned_cell->first, state.pipeline.pinned_cell->second);
        !cell.empty())
      // Several outlined cells (a row): the arithmetic is the first one's, and the caption says so.
      TextWrappedAtSpaces((state.pipeline.outlined.size() > 1
                               ? "Outlined, the first of " + std::to_string(state.pipeline.outlined.size()) + ": "
                               : std::string("Outlined: ")) +
                              cell,
                          accent_colour());
  // The step in a region of its own, which scrolls when its matrices need more room than the window has.
  ImGui::BeginChild("step", {0, 0}, false);
  if (state.pipeline.scroll_to_top) {  // not where the previous page left it
    ImGui::SetScrollY(0);
    state.pipeline.scroll_to_top = false;
  }
  StepView view{state, t, t.heads[static_cast<std::size_t>(state.pipeline.head)], ImGui::GetContentRegionAvail().y - 4,
                ImGui::GetCursorPosY()};
  draw_step(view);
  ImGui::EndChild();
  ImGui::End();
}

}  // namespace attn::ui
