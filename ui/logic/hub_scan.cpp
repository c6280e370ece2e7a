#include "ui/logic/hub_scan.h"

namespace attn::ui {

HubScan::HubScan() = default;
HubScan::~HubScan() = default;
HubScan::HubScan(HubScan&&) noexcept = default;
HubScan& HubScan::operator=(HubScan&&) noexcept = default;

void HubScan::start(std::filesystem::path cache, std::int64_t budget) {
  if (!worker_)
    worker_ = std::make_unique<LatestWorker<Job, Result>>(
        [](const Job& j) {
          return Result{.models = scan_hub_cache(j.cache, j.budget), .error = {}, .ticket = j.ticket};
        },
        [](const Job& j, const std::exception& e) {
          return Result{.models = {},
                        .error = "the Hugging Face cache could not be read: " + std::string(e.what()),
                        .ticket = j.ticket};
        },
        0.0);
  worker_->submit({std::move(cache), budget, ++asked_});
}

bool HubScan::poll() {
  if (!worker_) return false;
  std::optional<Result> done = worker_->take();
  if (!done) return false;
  answered_ = done->ticket;
  if (done->error.empty()) {
    models_ = std::move(done->models);
    error_.clear();
  } else {
    error_ = std::move(done->error);
  }
  return true;
}

void HubScan::wait() {
  if (!worker_) return;
  while (worker_->wait()) poll();
  poll();
}

}  // namespace attn::ui
