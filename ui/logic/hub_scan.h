#pragma once
// The models this computer has (core/io/hub_cache.h), looked for on a worker: the scan reads every model's config and
// weights headers, and a cache on a slow or network disk would otherwise stop the window's frames while it reads.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/io/hub_cache.h"
#include "ui/logic/latest_worker.h"

namespace attn::ui {

class HubScan {
 public:
  HubScan();
  ~HubScan();
  HubScan(HubScan&&) noexcept;
  HubScan& operator=(HubScan&&) noexcept;

  // Looks at `cache` again on the worker (a look not started yet is replaced); the last list stays until it is done.
  void start(std::filesystem::path cache, std::int64_t budget);
  // Every frame: takes a finished look. True when a new list (or why there is none) arrived.
  bool poll();
  // Until the worker has finished every look asked for, then poll()s (tests, screenshots).
  void wait();
  bool looking() const { return asked_ != answered_; }
  // The newest list, once a look finished.
  const std::optional<std::vector<CachedModel>>& models() const { return models_; }
  const std::string& error() const { return error_; }  // why the last look gave no list

 private:
  struct Job {
    std::filesystem::path cache;
    std::int64_t budget = 0;
    std::uint64_t ticket = 0;
  };
  struct Result {
    std::vector<CachedModel> models;
    std::string error;
    std::uint64_t ticket = 0;
  };
  std::unique_ptr<LatestWorker<Job, Result>> worker_;  // started by the first look: most windows never look
  std::optional<std::vector<CachedModel>> models_;
  std::string error_;
  std::uint64_t asked_ = 0, answered_ = 0;
};

}  // namespace attn::ui
