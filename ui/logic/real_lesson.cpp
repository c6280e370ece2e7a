#include "ui/logic/real_lesson.h"

#include <algorithm>
#include <cmath>

#include "core/kv_tradeoff.h"
#include "core/text_format.h"
#include "ui/logic/train_text.h"

namespace attn::ui {
namespace {

// "5.1, 5.5 and 6.9"
std::string head_list(const std::vector<HeadRef>& heads) {
  std::string out;
  for (std::size_t i = 0; i < heads.size(); ++i)
    out += (i == 0 ? "" : i + 1 == heads.size() ? " and " : ", ") + head_name(heads[i]);
  return out;
}

// "Strongest induction head: 5.1, score 0.620." (as trained) and, for the first token, how many heads lean on it.
std::string strongest_head(const ModelTrace& t, HeadRole role) {
  const std::vector<RankedHead> ranked = heads_by_score(t, role);
  if (ranked.empty()) return "No head has this score on the text: it needs a repeat.";
  std::string line = "Strongest " + role_name(role) + ": " + head_name(ranked.front().head) + ", score " +
                     probability_text(ranked.front().score) + ".";
  if (role != HeadRole::FirstToken) return line;
  const auto most = std::count_if(ranked.begin(), ranked.end(), [](const RankedHead& h) { return h.score > 0.5; });
  std::int64_t heads = 0;
  for (const LayerTrace& l : t.layers) heads += static_cast<std::int64_t>(l.head_scores.size());
  return line + " " + thousands(static_cast<std::uint64_t>(most)) + " of " + plural(heads, "head") +
         " put more than half their weight on it.";
}

// "The loss on the repeat: 0.41 nats as trained, 7.9 with 5.1, 5.5 and 6.9 knocked out." (or against the rest).
std::string repeat_loss(const RealModelRun& r) {
  const std::vector<int> at = repeat_positions(r.text.ids);
  const std::optional<double> now = mean_loss_at(r.losses, at, false);
  if (!now) return "The text has no repeat yet: Repeat my sentence gives it one.";
  if (r.baseline)
    return "The loss on the repeat: " + short_number(*mean_loss_at(r.baseline_losses, at, false)) +
           " nats as trained, " + short_number(*now) + " with " + head_list(r.state->ablation.heads) + " knocked out.";
  const std::optional<double> rest = mean_loss_at(r.losses, at, true);
  return "The loss on the repeat: " + short_number(*now) + " nats" +
         (rest ? ", against " + short_number(*rest) + " on the tokens no copy gives away." : ".");
}

// "10.935 against 1.441 (+9.494)": knocked out against as trained, or the one mean.
std::string means_text(const RealModelRun& r, const std::vector<int>& at, bool others) {
  const std::optional<double> now = mean_loss_at(r.losses, at, others);
  if (!now) return "";
  // Three decimals each, kept: 5.650 beside 5.564, not 5.65.
  const auto nats = [](double x) { return format_number(x, 3); };
  if (!r.baseline) return nats(*now);
  const double trained = *mean_loss_at(r.baseline_losses, at, others);
  return nats(*now) + " against " + nats(trained) + " (" + (*now >= trained ? "+" : "") + nats(*now - trained) + ")";
}

}  // namespace

std::string loss_caption(const RealModelRun& r) {
  const std::int64_t vocab = r.trace->logits.cols();
  const std::string uniform = "; dashed: a uniform guess, ln " + thousands(static_cast<std::uint64_t>(vocab)) + " = " +
                              short_number(std::log(static_cast<double>(vocab)));
  const std::string title = std::string("Loss in nats of predicting the token under each bar") +
                            (r.baseline ? " knocked out (filled) against as trained (outlined)" : "") + ": ";
  const std::vector<int> at = repeat_positions(r.text.ids);
  if (at.empty()) return title + "the mean " + means_text(r, {}, true) + uniform;
  const std::string rest = means_text(r, at, true);
  return title + "on the repeat " + means_text(r, at, false) + (rest.empty() ? "" : ", elsewhere " + rest) + uniform;
}

std::vector<RankedHead> heads_by_score(const ModelTrace& trace, HeadRole role) {
  std::vector<RankedHead> ranked;
  for (std::size_t l = 0; l < trace.layers.size(); ++l)
    for (std::size_t h = 0; h < trace.layers[l].head_scores.size(); ++h)
      if (const std::optional<double> s = score_of(trace.layers[l].head_scores[h], role))
        ranked.push_back({*s, {static_cast<int>(l), static_cast<int>(h)}});
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.score > b.score; });
  return ranked;
}

std::vector<int> repeat_positions(const std::vector<int>& ids) {
  std::vector<int> at;
  const auto n = static_cast<int>(ids.size());
  for (int i = 1; i + 1 < n; ++i)
    for (int j = 0; j < i; ++j)
      if (ids[static_cast<std::size_t>(j)] == ids[static_cast<std::size_t>(i)] &&
          ids[static_cast<std::size_t>(j + 1)] == ids[static_cast<std::size_t>(i + 1)]) {
        at.push_back(i);
        break;
      }
  return at;
}

std::optional<double> mean_loss_at(const std::vector<double>& losses, const std::vector<int>& positions, bool others) {
  double sum = 0;
  int count = 0;
  for (int i = 0; i < static_cast<int>(losses.size()); ++i)
    if (std::binary_search(positions.begin(), positions.end(), i) != others)
      sum += losses[static_cast<std::size_t>(i)], ++count;
  if (count == 0) return std::nullopt;
  return sum / count;
}

namespace {

constexpr const char* kNoModelYet =
    "No model is open yet: pick one beside this page, or File > Open model folder\u2026; huggingface-cli download "
    "gpt2 fetches GPT-2 small.";

// "mqa keeps 8.33% of the cache and adds 1.234 nats a token"
std::string point_cost(const TradeoffPoint& p, const TradeoffPoint& shipped) {
  const double kept = static_cast<double>(p.kv_bytes_per_token) / static_cast<double>(shipped.kv_bytes_per_token);
  const double added = tradeoff_point_loss(p) - tradeoff_point_loss(shipped);
  return tradeoff_point_name(p.conversion) + " keeps " + percent_text(kept) + " of the cache and " +
         (added < 0 ? "takes " + format_number(-added, 3) + " nats a token off the loss"
                    : "adds " + format_number(added, 3) + " nats a token");
}

}  // namespace

std::string measure_page_line(const RealModelDocument& doc, const TradeoffDocument& measured) {
  if (!doc.loaded() && !doc.computing())
    return "No model is open yet: open one with File > Open model folder\u2026 or on this lesson's first page; "
           "huggingface-cli download gpt2 fetches GPT-2 small.";
  if (doc.computing()) return "The model is " + progress_text(doc.progress()) + "\u2026";
  if (measured.computing()) return "Measuring: " + tradeoff_progress_text(measured.progress()) + "\u2026";
  if (!measured.loaded()) return "";
  const std::vector<TradeoffPoint>& points = *measured.shown().trace;
  const auto is_mla = [](const TradeoffPoint& p) { return p.conversion && p.conversion->to == KvTarget::Mla; };
  // The smallest GQA cache (mqa) and the largest MLA one within it.
  const TradeoffPoint* gqa = nullptr;
  for (const TradeoffPoint& p : points)
    if (p.conversion && !is_mla(p) && (!gqa || p.kv_bytes_per_token < gqa->kv_bytes_per_token)) gqa = &p;
  const TradeoffPoint* mla = nullptr;
  for (const TradeoffPoint& p : points)
    if (is_mla(p) && (!gqa || p.kv_bytes_per_token <= gqa->kv_bytes_per_token) &&
        (!mla || p.kv_bytes_per_token > mla->kv_bytes_per_token))
      mla = &p;
  std::string line;
  for (const TradeoffPoint* p : {gqa, mla})
    if (p) line += (line.empty() ? "On " + measured.shown().text_name + ", " : "; ") + point_cost(*p, points.front());
  return line.empty() ? line : line + ".";
}

std::string real_page_line(const RealModelDocument& doc, const LessonPage& page) {
  if (!doc.loaded() && !doc.computing()) return kNoModelYet;
  if (doc.computing()) return "The model is " + progress_text(doc.progress()) + "\u2026";
  const RealModelRun& r = doc.shown();
  std::string line;
  if (page.real_ranked) line = strongest_head(r.baseline ? *r.baseline : *r.trace, *page.real_ranked);
  if (page.real_ranked == HeadRole::Induction || page.real_knock_out_top > 0)
    line += (line.empty() ? "" : " ") + repeat_loss(r);
  return line;
}

}  // namespace attn::ui
