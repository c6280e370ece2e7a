#include "core/io/scenario_write.h"

#include "core/io/text_writer.h"

namespace attn {

std::string scenario_to_text(const Scenario& s) {
  const AttentionConfig& a = s.attention;
  ObjectText root("");
  root.add("name", quoted(s.name));
  if (!s.description.empty()) root.add("description", quoted(s.description));
  root.add("tokens", string_list(s.input.tokens));
  root.add("embeddings", matrix_text(s.input.embeddings, "  "));
  if (s.context) {
    ObjectText context("  ");
    context.add("tokens", string_list(s.context->tokens));
    context.add("embeddings", matrix_text(s.context->embeddings, "    "));
    root.add("context", context.str());
  }
  root.add("attention", attention_text(a, "  ", false));
  ObjectText weights("  ");
  bool any = false;
  for (WeightId id : kAllWeights)
    if (const auto& m = weight_slot(s.weights, id)) {
      weights.add(weight_name(id), weight_text(id, *m, "    "));
      any = true;
    }
  if (any) root.add("weights", weights.str());
  root.add("seed", std::to_string(s.seed));
  if (s.weight_scale != 1.0) root.add("weight_scale", number_text(s.weight_scale));
  return root.str() + "\n";
}

void save_scenario_file(const Scenario& s, const std::filesystem::path& path) {
  write_file_atomically(path, scenario_to_text(s));
}

}  // namespace attn
