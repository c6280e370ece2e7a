#include "core/io/scenario_write.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/validate.h"

namespace attn {
namespace {

using nlohmann::ordered_json;

// Shortest text that reads back to the same double (nlohmann's number format), 1 rather than 1.0.
std::string number(double x) {
  if (x == static_cast<double>(static_cast<long long>(x)) && std::abs(x) < 1e15)
    return std::to_string(static_cast<long long>(x));
  return ordered_json(x).dump();
}

std::string matrix_text(const Matrix& m, const std::string& indent) {
  std::string out = "[";
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    out += (r ? ",\n" : "\n") + indent + "  [";
    for (Eigen::Index c = 0; c < m.cols(); ++c) out += (c ? ", " : "") + number(m(r, c));
    out += "]";
  }
  return out + "\n" + indent + "]";
}

std::string string_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + ordered_json(items[i]).dump();
  return out + "]";
}

// Fields of one object, each "key": value, separated by commas and newlines.
class ObjectText {
 public:
  explicit ObjectText(std::string indent) : indent_(std::move(indent)) {}
  void add(const std::string& key, const std::string& value) {
    out_ += (out_.empty() ? "" : ",\n") + indent_ + "  " + ordered_json(key).dump() + ": " + value;
  }
  std::string str() const { return "{\n" + out_ + "\n" + indent_ + "}"; }

 private:
  std::string indent_, out_;
};

}  // namespace

std::string scenario_to_text(const Scenario& s) {
  const AttentionConfig& a = s.attention;
  ObjectText root("");
  root.add("name", ordered_json(s.name).dump());
  if (!s.description.empty()) root.add("description", ordered_json(s.description).dump());
  root.add("tokens", string_list(s.input.tokens));
  root.add("embeddings", matrix_text(s.input.embeddings, "  "));
  if (s.context) {
    ObjectText context("  ");
    context.add("tokens", string_list(s.context->tokens));
    context.add("embeddings", matrix_text(s.context->embeddings, "    "));
    root.add("context", context.str());
  }
  ObjectText attention("  ");
  attention.add("variant", ordered_json(to_string(a.variant)).dump());
  attention.add("heads", std::to_string(a.heads));
  if (a.variant == Variant::Gqa) attention.add("kv_heads", std::to_string(a.kv_heads));
  attention.add("head_dim", std::to_string(a.head_dim));
  if (a.variant == Variant::Mla) {
    attention.add("latent_dim", std::to_string(a.latent_dim));
    if (a.query_latent_dim > 0) attention.add("query_latent_dim", std::to_string(a.query_latent_dim));
  }
  attention.add("mask", ordered_json(to_string(a.mask)).dump());
  if (a.mask == MaskKind::SlidingWindow) attention.add("window", std::to_string(a.window));
  if (a.mask == MaskKind::Custom) attention.add("custom_mask", matrix_text(a.custom_mask, "    "));
  attention.add("scale", a.scale ? "true" : "false");
  attention.add("kernel", ordered_json(to_string(a.kernel)).dump());
  attention.add("output_projection", a.output_projection ? "true" : "false");
  if (a.positions != Positions::None) {
    attention.add("positions", ordered_json(to_string(a.positions)).dump());
    if (a.positions != Positions::Learned) attention.add("rope_base", number(a.rope_base));
    if (a.positions == Positions::Learned) attention.add("max_positions", std::to_string(a.max_positions));
    if (decoupled_rope(a)) attention.add("rope_dim", std::to_string(a.rope_dim));
    if (a.position_offset != 0) attention.add("position_offset", std::to_string(a.position_offset));
  }
  if (a.sparse) {
    ObjectText sparse("    ");
    sparse.add("top_k", std::to_string(a.sparse->top_k));
    sparse.add("indexer_heads", std::to_string(a.sparse->indexer_heads));
    sparse.add("indexer_dim", std::to_string(a.sparse->indexer_dim));
    attention.add("sparse", sparse.str());
  }
  root.add("attention", attention.str());
  ObjectText weights("  ");
  bool any = false;
  for (WeightId id : kAllWeights)
    if (const auto& m = weight_slot(s.weights, id)) {
      weights.add(weight_name(id), matrix_text(*m, "    "));
      any = true;
    }
  if (any) root.add("weights", weights.str());
  root.add("seed", std::to_string(s.seed));
  if (s.weight_scale != 1.0) root.add("weight_scale", number(s.weight_scale));
  return root.str() + "\n";
}

void save_scenario_file(const Scenario& s, const std::filesystem::path& path) {
  const std::filesystem::path temporary = path.string() + ".saving";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError("", "cannot write " + temporary.string());
    out << scenario_to_text(s);
    out.flush();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      throw InputError("", "writing " + temporary.string() + " failed (disk full?)");
    }
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::filesystem::remove(temporary, ec);
    throw InputError("", "cannot replace " + path.string() + ": " + ec.message());
  }
}

}  // namespace attn
