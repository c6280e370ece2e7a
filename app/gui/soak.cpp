#include "app/gui/soak.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "core/edits.h"
#include "core/io/scenario_write.h"

namespace attn::gui {
namespace {

std::string differs(const Matrix& shown, const Matrix& fresh, const std::string& what) {
  if (shown.rows() != fresh.rows() || shown.cols() != fresh.cols())
    return what + ": shown " + std::to_string(shown.rows()) + "x" + std::to_string(shown.cols()) + ", fresh " +
           std::to_string(fresh.rows()) + "x" + std::to_string(fresh.cols());
  for (Eigen::Index r = 0; r < shown.rows(); ++r)
    for (Eigen::Index c = 0; c < shown.cols(); ++c) {
      const double a = shown(r, c), b = fresh(r, c);
      if (a != b && !(std::isnan(a) && std::isnan(b)))
        return what + "[" + std::to_string(r) + "][" + std::to_string(c) + "]: shown " + std::to_string(a) +
               ", fresh " + std::to_string(b);
    }
  return "";
}

}  // namespace

std::string compare_traces(const Trace& shown, const Trace& fresh) {
  if (shown.tokens != fresh.tokens) return "tokens differ";
  if (shown.heads.size() != fresh.heads.size()) return "head counts differ";
  std::string d = differs(shown.x, fresh.x, "X");
  for (std::size_t h = 0; d.empty() && h < fresh.heads.size(); ++h) {
    // Copies whose matrices made on demand go with them: the check holds one head's at a time, and the shown
    // trace stays as the window keeps it (its kept weights are compared as they are).
    const HeadTrace a = fresh_head(shown.heads[h]), b = fresh_head(fresh.heads[h]);
    const std::string head = "head " + std::to_string(h) + " ";
    for (auto [m, f, name] : {std::tuple{&a.q, &b.q, "q"},
                              {&a.k, &b.k, "k"},
                              {&a.v, &b.v, "v"},
                              {&a.scores(), &b.scores(), "scores"},
                              {&a.scaled(), &b.scaled(), "scaled"},
                              {&*a.mask, &*b.mask, "mask"},
                              {&a.masked(), &b.masked(), "masked"},
                              {&shown.heads[h].weights(), &b.weights(), "weights"},
                              {&a.output, &b.output, "output"}})
      if (d.empty()) d = differs(*m, *f, head + name);
  }
  return d.empty() ? differs(shown.output, fresh.output, "output") : d;
}

bool Soak::edit(ui::AppState& state, const std::function<void(Scenario&)>& change, std::string& problem) {
  const std::string before = scenario_to_text(state.scenario());
  const std::uint64_t revision = state.document().revision;
  if (state.edit(change)) {
    ++counts_.applied;
    if (state.computing()) ++counts_.background;
    return true;
  }
  ++counts_.refused;
  if (scenario_to_text(state.scenario()) != before || state.document().revision != revision)
    problem = "a refused edit changed the document (" + state.message + ")";
  return false;
}

// An embedding cell; now and then a value no cell may hold.
void Soak::edit_embedding(ui::AppState& state, double value, std::string& problem) {
  const int r = pick(state.scenario().n_q()), c = pick(state.scenario().d_model());
  const double v = pick(10) == 0 ? std::array{std::numeric_limits<double>::quiet_NaN(),
                                              std::numeric_limits<double>::infinity(), 1e300}[pick(3)]
                                 : value;
  if (edit(
          state, [&](Scenario& d) { d.input.embeddings(r, c) = v; }, problem) &&
      !std::isfinite(v))
    problem = "a non-finite value was accepted";
}

// A cell of a weight the trace used (explicit from then on).
void Soak::edit_weight(ui::AppState& state, double value, std::string& problem) {
  const Weights used = state.trace().weights;
  std::vector<WeightId> ids;
  for (WeightId id : kAllWeights)
    if (weight_slot(used, id)) ids.push_back(id);
  const WeightId id = ids[static_cast<std::size_t>(pick(static_cast<int>(ids.size())))];
  const Matrix& w = *weight_slot(used, id);
  const int r = pick(static_cast<int>(w.rows())), c = pick(static_cast<int>(w.cols()));
  edit(
      state,
      [&](Scenario& d) {
        Matrix edited = w;
        edited(r, c) = value;
        weight_slot(d.weights, id) = std::move(edited);
      },
      problem);
}

// Another mask; a custom one starts from the shown mask, as the inputs panel starts it, with one cell flipped.
void Soak::edit_mask(ui::AppState& state, std::string& problem) {
  const int kind = pick(4);
  const Matrix shown_mask = *state.trace().heads[0].mask;
  edit(
      state,
      [&](Scenario& d) {
        d.attention.mask = static_cast<MaskKind>(kind);
        d.attention.window = 1 + pick(3);
        if (d.attention.mask != MaskKind::Custom) return;
        d.attention.custom_mask = shown_mask;
        if (shown_mask.size() == 0) return;
        double& cell = d.attention.custom_mask(pick(int(shown_mask.rows())), pick(int(shown_mask.cols())));
        cell = 1.0 - cell;
      },
      problem);
}

void Soak::edit_variant(ui::AppState& state, std::string& problem) {
  const Variant v = static_cast<Variant>(pick(4));
  const std::vector<int> div = divisors(state.scenario().attention.heads);
  const int g = div[static_cast<std::size_t>(pick(static_cast<int>(div.size())))];
  const Weights used = *state.document_weights();
  const int latent = 1 + pick(4), query_latent = pick(3);
  edit(
      state, [&](Scenario& d) { switch_variant(d, used, v, g, latent, query_latent); }, problem);
}

// Rename a token; an empty or duplicate label is refused.
void Soak::rename_token(ui::AppState& state, std::string& problem) {
  const Scenario& s = state.scenario();
  const std::string label = pick(4) == 0 ? "" : pick(4) == 0 ? s.input.tokens[0] : "w" + std::to_string(pick(100));
  const int i = pick(s.n_q());
  edit(
      state, [&](Scenario& d) { d.input.tokens[static_cast<std::size_t>(i)] = label; }, problem);
}

// Undo, and a redo straight after must return to the same document.
void Soak::undo_and_redo(ui::AppState& state, std::string& problem) {
  if (!state.can_undo()) return;
  const std::string before = scenario_to_text(state.scenario());
  state.undo();
  ++counts_.undos;
  if (pick(2) == 0) return;
  state.redo();
  ++counts_.redos;
  if (scenario_to_text(state.scenario()) != before) problem = "undo then redo did not come back to the same document";
}

// Scale on or off, where positions enter (rope is refused for an odd head_dim), a shift of every position (now and
// then past the limits), or sparse attention on or off.
void Soak::toggle_attention_extra(ui::AppState& state, std::string& problem) {
  switch (pick(4)) {
    case 0:
      edit(
          state, [](Scenario& d) { d.attention.scale = !d.attention.scale; }, problem);
      break;
    case 1: {
      const auto p = static_cast<Positions>(pick(4));
      edit(
          state, [p](Scenario& d) { set_positions(d, p, 2); }, problem);
      break;
    }
    case 2: {
      const int shift = std::array{0, 1, 5, 100000, 5000, -1}[pick(6)];
      edit(
          state, [shift](Scenario& d) { set_position_offset(d, shift); }, problem);
      break;
    }
    default: {
      const std::optional<SparseConfig> c =
          pick(2) == 0 ? std::nullopt : std::optional(SparseConfig{1 + pick(4), 1 + pick(2), 1 + pick(3)});
      edit(
          state, [&c](Scenario& d) { set_sparse(d, c); }, problem);
    }
  }
}

std::string Soak::act(ui::AppState& state) {
  ++counts_.actions;
  std::string problem;
  const int n = state.scenario().n_q();
  const double value = (pick(41) - 20) / 10.0;
  switch (pick(20)) {
    case 0:
    case 1: edit_embedding(state, value, problem); break;
    case 2: edit_weight(state, value, problem); break;
    case 3:
      edit(
          state, [](Scenario& d) { add_token(d, fresh_token_label(d)); }, problem);
      break;
    case 4:
      edit(
          state, [&](Scenario& d) { remove_token(d, pick(n)); }, problem);
      break;
    case 5: {  // the scale slider: mostly small, now and then big enough for the worker
      const int count = pick(8) == 0 ? 150 + pick(250) : 1 + pick(10);
      edit(
          state, [count](Scenario& d) { set_token_count(d, count); }, problem);
      break;
    }
    case 6: edit_mask(state, problem); break;
    case 7: edit_variant(state, problem); break;
    case 8:
      edit(
          state, [&](Scenario& d) { set_head_shape(d, 1 + pick(4), 1 + pick(4)); }, problem);
      break;
    case 9:
      edit(
          state,
          [](Scenario& d) {
            d.attention.kernel = d.attention.kernel == Kernel::Softmax ? Kernel::Linear : Kernel::Softmax;
          },
          problem);
      break;
    case 10: toggle_attention_extra(state, problem); break;
    case 11:  // new weights: the next seed, or another scale for the drawn ones (0 is refused)
      if (pick(2) == 0) edit(state, reseed_weights, problem);
      else
        edit(
            state,
            [&](Scenario& d) {
              d.weight_scale = std::array{0.05, 0.2, 1.0, 0.0}[pick(4)];
            },
            problem);
      break;
    case 12: rename_token(state, problem); break;
    case 13:
    case 14: undo_and_redo(state, problem); break;
    case 15:
      if (state.can_redo()) {
        state.redo();
        ++counts_.redos;
      }
      break;
    case 16: state.set_step(pick(ui::step_count(state.trace().attention))); break;
    case 17: state.set_head(pick(8)); break;
    case 18: state.show_view(static_cast<ui::View>(pick(ui::kViewCount))); break;
    default: state.set_decode_token(pick(n)); break;
  }
  return problem;
}

std::string Soak::check(ui::AppState& state) {
  ++counts_.checks;
  state.wait();
  const Scenario& s = state.scenario();
  const Trace& shown = state.trace();
  if (std::string d = compare_traces(shown, compute_trace(s)); !d.empty())
    return "the shown trace differs from a fresh one: " + d;
  if (const DecodeTrace* dec = state.decoded()) {
    const Trace& causal = state.causal_trace();
    if (static_cast<int>(dec->steps.size()) != s.n_q())
      return "the decoding has " + std::to_string(dec->steps.size()) + " steps";
    for (const DecodeStep& step : dec->steps) {
      // The linear kernel divides by Z = sum of the scores. When the scores are rounding noise of 0 (a query
      // that cancels to 1e-17: the actions draw values in steps of 0.1, so a true score is never that small),
      // Z is 0/0 and the absorbed and explicit forms of the arithmetic may answer differently. Such rows are
      // left out, as are rows either side flagged ZeroSum.
      bool degenerate =
          std::any_of(step.status.begin(), step.status.end(), [](RowStatus r) { return r == RowStatus::ZeroSum; });
      for (const HeadTrace& h : causal.heads)
        degenerate = degenerate || (s.attention.kernel == Kernel::Linear &&
                                    (h.row_status[std::size_t(step.t)] == RowStatus::ZeroSum ||
                                     h.scaled().row(step.t).cwiseAbs().maxCoeff() < 1e-9));
      if (degenerate) continue;
      const double size = std::max(1.0, causal.output.row(step.t).cwiseAbs().maxCoeff());
      const double gap = (step.output - causal.output.row(step.t)).cwiseAbs().maxCoeff();
      if (!(gap <= 1e-9 * size))
        return "decode step " + std::to_string(step.t) + " differs from the causal trace by " + std::to_string(gap);
    }
  }
  if (state.pipeline.head < 0 || state.pipeline.head >= static_cast<int>(shown.heads.size()))
    return "the selected head is out of range";
  if (state.decode.token < 0 || state.decode.token >= s.n_q()) return "the decode step is out of range";
  return "";
}

}  // namespace attn::gui
