// libFuzzer target over the scenario loader and everything a loaded scenario goes through (trace, decode,
// JSON, writer and reload). Built only with -DATTN_FUZZ=ON and Clang; run it with scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_scenario_body.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return attn::fuzz::fuzz_one_input(data, size);
}
