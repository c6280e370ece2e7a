#include "ui/logic/tradeoff.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/io/checkpoint_text.h"
#include "core/text_format.h"
#include "core/text_quality.h"
#include "core/validate.h"

namespace attn::ui {
namespace {

// The worker rests as long again as it worked before another measurement: a class's edits do not keep it busy.
constexpr double kRestAfterMeasuring = 1.0;
// Why a measurement stopped: a newer one was asked for (not a failure to tell).
constexpr const char* kSuperseded = "superseded by a newer measurement";

struct Superseded {};

// The layers a smaller cache can be made of: those not mla already (a converted model's may be).
std::vector<int> measured_layers(const Model& m) {
  std::vector<int> layers;
  for (std::size_t l = 0; l < m.layers.size(); ++l)
    if (m.layers[l].attention.variant != Variant::Mla) layers.push_back(static_cast<int>(l));
  if (layers.empty()) throw InputError("", "every layer is mla already: there is no smaller cache to measure");
  return layers;
}

// The conversions of those layers; said in the window's words when their key/value heads differ (a converted
// folder's).
std::vector<KvConversion> measured_conversions(const Model& m) {
  try {
    return tradeoff_conversions(m, measured_layers(m));
  } catch (const InputError& e) {
    if (e.field() != "--layers") throw;
    const std::string what = e.what();
    throw InputError("", "its layers were converted differently (" + what.substr(e.field().size() + 2) +
                             "): measure the model it was made from");
  }
}

TradeoffRun measure_job(const TradeoffJob& job, TradeoffProgress& progress) {
  const auto start = std::chrono::steady_clock::now();
  TradeoffRun r{job.model, job.folder, job.text_name, std::ssize(job.text.ids), nullptr, job.ticket, 0.0, ""};
  progress.done = 0;
  progress.points = 0;
  progress.running = true;
  try {
    const CheckpointModel& m = *job.model;
    if (r.tokens < 2) throw InputError("", "the text makes one token: a loss needs a next token to predict");
    const std::vector<KvConversion> conversions = measured_conversions(m.model());
    check_memory_budget(tradeoff_bytes(m, job.text, conversions), job.budget,
                        "measuring every conversion of " + m.name(), "a shorter text");
    progress.points = static_cast<int>(conversions.size()) + 1;
    const int window = static_cast<int>(std::min<std::int64_t>(checkpoint_window(m), r.tokens));
    const EvalModel original{m.model(), m};
    const WindowedRun run = run_windows(original, job.text.ids, job.text.pieces, window);
    r.trace = std::make_shared<const std::vector<TradeoffPoint>>(
        measure_tradeoff(original, run, conversions, [&](int done, int) {
          if (progress.newest != job.ticket) throw Superseded{};
          progress.done = done;
        }));
  } catch (const Superseded&) {
    r.error = kSuperseded;
  } catch (const std::exception& e) {
    r.error = dynamic_cast<const std::bad_alloc*>(&e) ? "the measurement does not fit in memory" : e.what();
  }
  progress.running = false;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace

std::int64_t tradeoff_bytes(const CheckpointModel& m, const Encoding& text,
                            const std::vector<KvConversion>& conversions) {
  const int window = static_cast<int>(std::min<std::int64_t>(checkpoint_window(m), std::ssize(text.ids)));
  return text_eval_bytes(m, text, window, true) + tradeoff_conversion_bytes(m.model(), conversions);
}

TradeoffDocument::TradeoffDocument(std::int64_t memory_budget)
    : budget_(memory_budget),
      results_([progress = progress_](const TradeoffJob& j) { return measure_job(j, *progress); },
               [](const TradeoffJob& j, const std::exception& e) {
                 return TradeoffRun{j.model, j.folder, j.text_name, 0, nullptr, j.ticket, 0.0, e.what()};
               },
               kRestAfterMeasuring, &TradeoffRun::error) {}

void TradeoffDocument::measure(std::shared_ptr<const CheckpointModel> model, std::filesystem::path folder,
                               Encoding text, std::string text_name) {
  cancelled_ = false;
  asked_ = {model, folder, text_name, text.ids};
  const std::uint64_t ticket = results_.next_ticket();
  progress_->newest = ticket;
  results_.submit({std::move(model), std::move(folder), std::move(text), std::move(text_name), ticket, budget_});
}

bool TradeoffDocument::asked_for(const std::shared_ptr<const CheckpointModel>& model,
                                 const std::filesystem::path& folder, const std::string& text_name,
                                 const std::vector<int>* ids) const {
  return !cancelled_ && asked_.model && asked_.model == model && asked_.folder == folder &&
         asked_.text_name == text_name && (!ids || asked_.ids == *ids);
}

void TradeoffDocument::cancel() {
  cancelled_ = true;
  asked_ = {};
  progress_->newest = results_.next_ticket();
}

bool TradeoffDocument::poll(std::optional<std::string>& failure) {
  const bool shown = results_.poll(failure);
  if (failure && *failure == kSuperseded) failure.reset();
  return shown;
}

namespace {

// "+0.0412", "-0.1069", and "0.0000" for a change that rounds to none either way.
std::string signed_change(double change) {
  std::string text = format_number(std::abs(change), 4);
  if (text.find_first_not_of("0.") == std::string::npos) return text;
  return (change < 0 ? "-" : "+") + text;
}

}  // namespace

std::vector<TradeoffRow> tradeoff_rows(const std::vector<TradeoffPoint>& points, std::int64_t context) {
  std::vector<TradeoffRow> rows;
  if (points.empty()) return rows;
  const double base = tradeoff_point_loss(points.front());
  for (const TradeoffPoint& p : points) {
    const double loss = tradeoff_point_loss(p), bytes = static_cast<double>(p.kv_bytes_per_token);
    const double change = loss - base;
    rows.push_back({tradeoff_point_name(p.conversion),
                    thousands(static_cast<std::uint64_t>(p.kv_bytes_per_token)) + " B",
                    format_unit(bytes * static_cast<double>(context), NumberUnit::DecimalBytes),
                    format_number(loss, 4) + (p.conversion ? " (" + signed_change(change) + ")" : ""),
                    format_number(std::exp(loss), 2), p.conversion ? percent_text(p.sums.top1_agreement()) : "-",
                    p.conversion ? format_number(p.sums.mean_kl(), 4) : "-"});
  }
  return rows;
}

std::string tradeoff_progress_text(const TradeoffProgress& p) {
  if (p.points == 0) return "reading the text";
  if (p.done == 0) return "the model as shipped, on every window";
  return "point " + std::to_string(p.done + 1) + " of " + std::to_string(p.points);
}

double tradeoff_progress_fraction(const TradeoffProgress& p) {
  return p.points == 0 ? 0.0 : static_cast<double>(p.done) / p.points;
}

}  // namespace attn::ui
