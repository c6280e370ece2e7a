#include "core/io/model_write.h"

#include "core/io/text_writer.h"

namespace attn {
namespace {

std::string layer_text(const ModelLayer& l) {
  ObjectText layer("    ");
  layer.add("attention", attention_text(l.attention, "      ", true));
  ObjectText weights("      ");
  for (WeightId id : kAllWeights)
    if (const auto& m = weight_slot(l.weights, id)) weights.add(weight_name(id), weight_text(id, *m, "        "));
  for (const LayerWeightField& f : kLayerWeightFields)
    if (const auto& m = l.own.*f.slot) weights.add(f.name, f.row ? row_text(*m) : matrix_text(*m, "        "));
  if (!weights.empty()) layer.add("weights", weights.str());
  return layer.str();
}

}  // namespace

std::string model_to_text(const Model& m) {
  ObjectText root("");
  root.add("name", quoted(m.name));
  if (!m.description.empty()) root.add("description", quoted(m.description));
  root.add("vocab", string_list(m.vocab));
  root.add("d_model", std::to_string(m.d_model));
  root.add("max_positions", std::to_string(m.max_positions));
  root.add("positions", quoted(std::string(to_string(m.positions))));
  if (m.positions == Positions::Sinusoidal || m.positions == Positions::Rope)
    root.add("rope_base", number_text(m.rope_base));
  if (m.positions == Positions::Rope) add_rope_settings(root, m.rope_pairing, m.rope_scaling);
  root.add("norm", quoted(std::string(to_string(m.norm))));
  if (m.norm != Norm::None && m.norm_function != NormFunction::LayerNorm)  // no norm computes nothing with them
    root.add("norm_function", quoted(std::string(to_string(m.norm_function))));
  if (m.norm != Norm::None && m.norm_eps != 1e-5) root.add("norm_eps", number_text(m.norm_eps));
  if (m.ffn.kind != FfnKind::None)
    root.add("ffn", "{\"kind\": " + quoted(std::string(to_string(m.ffn.kind))) +
                        ", \"d_ff\": " + std::to_string(m.ffn.d_ff) + "}");
  std::string layers = "[";
  for (std::size_t l = 0; l < m.layers.size(); ++l) layers += (l ? ",\n    " : "\n    ") + layer_text(m.layers[l]);
  root.add("layers", layers + "\n  ]");
  if (m.embedding) root.add("embedding", matrix_text(*m.embedding, "  "));
  if (m.W_P) root.add("W_P", matrix_text(*m.W_P, "  "));
  if (m.final_gain) root.add("final_gain", row_text(*m.final_gain));
  if (m.final_bias) root.add("final_bias", row_text(*m.final_bias));
  if (m.tied_unembedding) root.add("tied_unembedding", "true");
  if (m.unembedding) root.add("unembedding", matrix_text(*m.unembedding, "  "));
  root.add("seed", std::to_string(m.seed));
  return root.str() + "\n";
}

void save_model_file(const Model& m, const std::filesystem::path& path) {
  write_file_atomically(path, model_to_text(m));
}

}  // namespace attn
