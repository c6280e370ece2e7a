#pragma once
// The memory budget: the bytes a command or a view may hold, known from the shapes before anything is computed or
// printed. One number in bytes (std::int64_t) passed to whatever checks against it; the default is set by the
// application from the machine's memory (app/cli/memory_option.h), never read here.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/validate.h"

namespace attn {

namespace limits {
// The most the default budget is (what a trace could hold before the budget could be set): 8 heads of 64 at 4,096
// tokens and d_model 512 take 2.51 GB of it.
inline constexpr std::int64_t kDefaultMemoryBudget = std::int64_t(3) << 30;
// The default takes at most this share of the machine's physical memory (1/2), so a small laptop keeps room for
// the rest of the system.
inline constexpr std::int64_t kPhysicalMemoryDivisor = 2;
// The program itself, beside what its work holds: code, libraries, the BLAS's buffers and the heap's own
// bookkeeping (a command on "the cat sat" peaks at about 10 MiB). Every check counts it.
inline constexpr std::int64_t kProgramBytes = std::int64_t(16) << 20;
// The most --memory-budget may say (1 EiB): sums of bytes stay far from overflowing.
inline constexpr std::int64_t kMaxMemoryBudget = std::int64_t(1) << 60;
}  // namespace limits

// min(kDefaultMemoryBudget, physical_bytes / kPhysicalMemoryDivisor); kDefaultMemoryBudget when the physical memory
// is unknown (0 or less).
std::int64_t default_memory_budget(std::int64_t physical_bytes);

// "3221225472", "512M", "2G", "1.5GiB", "2 GB": bytes, or a number with a unit. K, M, G, T and KiB, MiB, GiB, TiB
// are 1024-based (as memory is sized); KB, MB, GB, TB are 1000-based; B and bytes are bytes; letters in any case.
// A fraction of a byte is dropped. Throws InputError(field, ...) for anything else, 0, or more than 1 EiB.
std::int64_t parse_memory_size(std::string_view text, const std::string& field);

// Refused past the budget: an InputError whose message gives both numbers.
class BudgetError : public InputError {
 public:
  BudgetError(std::int64_t needed, std::int64_t budget, const std::string& message)
      : InputError("", message), needed_(needed), budget_(budget) {}
  std::int64_t needed() const { return needed_; }
  std::int64_t budget() const { return budget_; }

 private:
  std::int64_t needed_, budget_;
};

// What the process holds beside the work being checked, which the same budget must leave room for: the other
// views of a window ("the window and the Train view"). Nothing (0 bytes) for a command.
struct HeldBeside {
  std::int64_t bytes = 0;
  std::string what;
};

// "this trace needs 5,497,558,138 bytes (5.12 GiB) but the memory budget is 3,221,225,472 bytes (3.00 GiB); use
// --memory-budget, fewer tokens or heads": `what` names the work ("this trace"), `fewer` what would shrink it. With
// something held beside: "... but the memory budget is 3,221,225,472 bytes (3.00 GiB), of which 2,147,483,648 bytes
// (2.00 GiB) are held by the window and the Train view; use ...".
std::string budget_message(std::int64_t needed, std::int64_t budget, std::string_view what, std::string_view fewer,
                           const HeldBeside& beside = {});
// budget_message when needed + limits::kProgramBytes + beside.bytes > budget (its number is needed plus the
// program's share: what the work makes the process hold), else nothing: for a view that says why it keeps what it
// shows.
std::optional<std::string> budget_refusal(std::int64_t needed, std::int64_t budget, std::string_view what,
                                          std::string_view fewer, const HeldBeside& beside = {});
// Throws BudgetError with budget_refusal's message past the budget.
void check_memory_budget(std::int64_t needed, std::int64_t budget, std::string_view what,
                         std::string_view fewer = "fewer tokens or heads", const HeldBeside& beside = {});

// The trace of `s` (valid) within the budget: predicted_trace_bytes(s) + extra (what the caller holds beside it,
// such as printing), else BudgetError ("this trace needs ...").
void check_trace_budget(const Scenario& s, std::int64_t budget, std::int64_t extra = 0);

}  // namespace attn
