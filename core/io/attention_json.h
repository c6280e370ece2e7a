#pragma once
// What scenario and model files share: token lists, matrices, and the attention block, each read with its
// path ("attention", "layers[1].attention") so that every problem names where it is.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config.h"
#include "core/matrix.h"
#include "core/weights.h"

namespace attn {

struct JsonSource;  // core/io/json_fields.h

std::string index_path(const std::string& path, std::size_t i);  // "layers[2]"
std::vector<std::string> read_tokens(const nlohmann::json& j, const std::string& path);
Matrix read_matrix(const nlohmann::json& j, const std::string& path);
// A 1-D array of numbers as one row (LayerNorm gains, biases); problems name the flat index.
Matrix read_row(const nlohmann::json& j, const std::string& path);
// A weight as files write it: a bias as a flat row (read_row), any other a matrix.
Matrix read_weight(WeightId id, const nlohmann::json& j, const std::string& path);

// A rope_scaling object: {"type": "llama3", "factor", "low_freq_factor", "high_freq_factor",
// "original_max_positions"}, every key required.
RopeScaling read_rope_scaling(const nlohmann::json& j, const std::string& path, const JsonSource* source = nullptr);

// The attention block at `path`. has_w_o: the file gives W_O (output_projection's default); w_p_rows: the rows of
// a given W_P (0: none); longer: the longer side's token count (learned max_positions' default).
// With a source, a number in a message is quoted as written.
AttentionConfig read_attention(const nlohmann::json& j, const std::string& path, bool has_w_o, int w_p_rows, int longer,
                               const JsonSource* source = nullptr);

}  // namespace attn
