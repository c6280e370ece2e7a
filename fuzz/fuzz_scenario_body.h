#pragma once
// The body of the scenario fuzz target, shared by the libFuzzer executable (fuzz_scenario, Clang only) and
// the plain regression runner over the corpus (fuzz_regression, any compiler).
//
// One scenario input: parse it as a scenario file. Refusals (InputError) are fine. A scenario that loads is run
// through compute_trace, decode (self-attention only), the JSON trace and the writer, and every invariant
// the engine promises is checked; a broken one prints what and where, then aborts.
#include <cstddef>
#include <cstdint>

namespace attn::fuzz {

// Returns 0 (libFuzzer's convention) or aborts with a message on stderr.
int fuzz_one_scenario(const std::uint8_t* data, std::size_t size);

// One input of the fuzz target (fuzz_files.cpp): its first byte picks the reader -- 's' settings, 'r' recovery,
// 'l' lesson, 'p' presets, 'b' batches (of a five-token model), 't' a safetensors file, 'c' a model's config.json, 'k' a
// tokenizer.json, the
// rest of the bytes being the file; any other
// first byte (a JSON document starts with '{', '[' or a space) makes the whole input a scenario or model file.
int fuzz_one_input(const std::uint8_t* data, std::size_t size);

}  // namespace attn::fuzz
