#pragma once
// One function per subcommand. Each returns the process exit code: 0 done, 2 bad input.
#include <cstdint>
#include <ostream>
#include <span>
#include <string>

namespace attn::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // a bug or an environment problem, not the user's input
inline constexpr int kExitBadInput = 2;

// `budget`: the memory budget in bytes (--memory-budget, taken out of the words by run_cli): what the command and its
// output may hold, checked from the shapes before anything is computed.
int trace_command(std::span<const std::string> args, std::ostream& out, std::ostream& err, std::int64_t budget);
int decode_command(std::span<const std::string> args, std::ostream& out, std::ostream& err, std::int64_t budget);
int kv_command(std::span<const std::string> args, std::ostream& out, std::ostream& err);
int online_command(std::span<const std::string> args, std::ostream& out, std::ostream& err, std::int64_t budget);
int run_command(std::span<const std::string> args, std::ostream& out, std::ostream& err, std::int64_t budget);
int models_command(std::span<const std::string> args, std::ostream& out, std::ostream& err, std::int64_t budget);
int tokenize_command(std::span<const std::string> args, std::ostream& out, std::ostream& err, std::int64_t budget);
int eval_command(std::span<const std::string> args, std::ostream& out, std::ostream& err, std::int64_t budget);
int convert_command(std::span<const std::string> args, std::ostream& out, std::ostream& err, std::int64_t budget);
int train_command(std::span<const std::string> args, std::ostream& out, std::ostream& err, std::int64_t budget);

extern const char* const kTraceHelp;
extern const char* const kKvHelp;
extern const char* const kDecodeHelp;
extern const char* const kOnlineHelp;
extern const char* const kRunHelp;
extern const char* const kTrainHelp;
extern const char* const kTokenizeHelp;
extern const char* const kEvalHelp;
extern const char* const kConvertHelp;
extern const char* const kModelsHelp;

}  // namespace attn::cli
