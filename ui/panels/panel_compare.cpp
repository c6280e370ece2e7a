// The cache of MHA, GQA, MQA and MLA side by side, as areas: first for the scenario on screen (numbers
// per token in its one layer), then for a real model (bytes for a whole context).
#include <algorithm>
#include <array>
#include <cmath>

#include "core/decode.h"
#include "core/edits.h"
#include "core/kv_compare.h"
#include "ui/logic/chart_axes.h"
#include "ui/logic/compare_text.h"
#include "ui/panels/panels.h"
#include "ui/widgets/layout_check_frame.h"
#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"
#include "ui/widgets/variant_blocks.h"

namespace attn::ui {
namespace {

const char* const kVariantTitles[] = {"MHA", "GQA", "MQA", "MLA"};

std::string ratio_text(double value, double mha) {
  if (value <= 0 || mha <= 0) return "";
  if (value == mha) return "= MHA";
  const double r = mha / value;
  if (std::abs(r - std::round(r)) < 1e-9)
    return "1/" + std::to_string(static_cast<long long>(std::round(r))) + " of MHA";
  return format_unit(100.0 * value / mha, NumberUnit::Plain) + "% of MHA";
}

// The scenario's own configuration recast as each variant: cached numbers per token in its layer.
std::vector<Block> scenario_blocks(const Scenario& s) {
  const AttentionConfig& own = s.attention;
  const int H = own.heads, d = own.head_dim;
  const std::vector<int> div = divisors(H);
  const int g = own.variant == Variant::Gqa ? own.kv_heads : div.size() > 2 ? div[div.size() - 2] : 0;
  const int latent = own.variant == Variant::Mla ? own.latent_dim : std::max(1, (s.d_model() + 1) / 2);
  const double values[] = {2.0 * H * d, g > 0 ? 2.0 * g * d : 0.0, 2.0 * d, static_cast<double>(latent)};
  const std::array<std::string, 4> how = cache_formulas(H, g, d, latent);
  std::vector<Block> blocks;
  for (int i = 0; i < 4; ++i) {
    const bool is_own = static_cast<int>(own.variant) == i;
    Block b{kVariantTitles[i], values[i], {}, variant_colour(i), is_own};
    if (values[i] > 0) {
      b.lines.push_back(format_exact(values[i], NumberUnit::Plain) + " numbers per token");
      b.lines.push_back(how[static_cast<std::size_t>(i)]);
      b.lines.push_back(ratio_text(values[i], values[0]));
    } else {
      b.lines.push_back(how[static_cast<std::size_t>(i)]);
    }
    if (is_own) b.lines.push_back("(this scenario)");
    blocks.push_back(std::move(b));
  }
  return blocks;
}

// Where the numbers for this form come from: the model itself, or a stated rule. The MHA and MQA forms of a model
// with decoupled RoPE keep its wider keys (DeepSeek: 128 + 64).
std::string form_note(const VariantForm& f, Variant own, int i) {
  static const char* const kChosen[] = {"(one KV head per query head)", "(G chosen: 8, or the largest divisor)",
                                        "(one KV head for all)", "(DeepSeek's proportions)"};
  if (f.variant == own) return "(the model's own)";
  if (f.model_own) return "(the model's own widths)";
  const int r = f.shape->rope_dim;
  if (r > 0 && (f.variant == Variant::Mha || f.variant == Variant::Mqa))
    return "(keys " + std::to_string(f.shape->head_dim) + " + " + std::to_string(r) + ", as the model's)";
  return kChosen[i];
}

std::vector<Block> model_blocks(const ModelShape& m, const ModelViewSettings& settings) {
  const auto forms = variant_forms(m);
  std::vector<Block> blocks;
  double mha_bytes = 0;
  for (int i = 0; i < 4; ++i) {
    const VariantForm& f = forms[static_cast<std::size_t>(i)];
    Block b{kVariantTitles[i], 0, {}, variant_colour(i), f.variant == m.variant};
    if (!f.shape) {
      b.lines.push_back(no_grouping_text(m.heads));
      blocks.push_back(std::move(b));
      continue;
    }
    const KvCacheSize size = kv_cache_size(*f.shape, static_cast<std::uint64_t>(settings.context),
                                           static_cast<std::uint64_t>(settings.batch), settings.dtype);
    if (i == 0) mha_bytes = static_cast<double>(size.total_bytes);
    b.value = static_cast<double>(size.total_bytes);
    if (i == 1) b.title += " (G=" + std::to_string(f.shape->kv_heads) + ")";
    // The bytes and the ratio only: the numbers per token are the row above's, and every line here takes room from
    // the squares, whose areas differ 64-fold or more.
    b.lines.push_back(format_unit(static_cast<double>(size.total_bytes), NumberUnit::DecimalBytes));
    b.lines.push_back(ratio_text(b.value, mha_bytes));
    b.lines.push_back(form_note(f, m.variant, i));
    blocks.push_back(std::move(b));
  }
  return blocks;
}

}  // namespace

void ComparePanel(AppState& state, ImVec2 pos, ImVec2 size) {
  BeginPanel("Compare", pos, size);
  // With a real model open, a second tab measures what the smaller caches cost it.
  if (state.real_model.loaded() && ImGui::BeginTabBar("compare tabs")) {
    // The model measured, once measured: the Real model view may have opened another since.
    const std::string measured =
        "Measured on " +
        (state.tradeoff.loaded() ? state.tradeoff.shown().model : state.real_model.shown().source)->name();
    CompareView& v = state.compare;
    const auto tab = [&](const char* name, bool measured) {
      const ImGuiTabItemFlags flags = v.select_tab && v.measured == measured ? ImGuiTabItemFlags_SetSelected : 0;
      if (!ImGui::BeginTabItem(name, nullptr, flags)) return;
      if (!v.select_tab) v.measured = measured;
      ImGui::EndTabItem();
    };
    tab("Cache sizes", false);
    tab(measured.c_str(), true);
    v.select_tab = false;
    ImGui::EndTabBar();
    if (state.compare.measured) {
      CompareMeasured(state);
      ImGui::End();
      return;
    }
  }
  ImGui::PushFont(title_font());
  TextWrappedAtSpaces("\"" + state.scenario().name + "\": numbers cached per token");
  ImGui::PopFont();
  // Beside a lesson its text explains the squares: the room goes to them.
  if (!state.lesson.open())
    TextDisabledWrapped(
        "Each square's area is what its variant caches per token. GQA shares each KV head among a group of "
        "query heads, MQA one among all, MLA caches one small latent instead.");
  // The scenario's squares differ by at most a factor of 4 in area, a real model's by 64 or more: the model's row
  // takes what the scenario's does not need, so that MQA's square is still a square and not a dot.
  const std::vector<Block> own = scenario_blocks(state.scenario());
  const float line = ImGui::GetTextLineHeightWithSpacing();
  VariantBlocks("scenario", own, VariantBlocksLabelsHeight(own) + 2.5f * line);
  NoteInSight(SightKind::Result, "scenario", "the scenario's squares and their sizes", ImGui::GetItemRectMin(),
              ImGui::GetItemRectMax());
  ImGui::Separator();
  // What is left, so the sizes under the squares stay in view; the squares shrink to make room for them.
  if (const ModelShape* m = PresetControls(state, true, true)) {
    VariantBlocks("model", model_blocks(*m, state.models), std::max(ImGui::GetContentRegionAvail().y - 4, 8 * line));
    NoteInSight(SightKind::Result, "model", "the model's squares and their sizes", ImGui::GetItemRectMin(),
                ImGui::GetItemRectMax());
  }
  ImGui::End();
}

}  // namespace attn::ui
