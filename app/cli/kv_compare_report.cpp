// `attention-lab kv --compare`: one model's cache as MHA, GQA, MQA and MLA, with the ratio to MHA.
#include <optional>

#include "app/cli/kv_report.h"
#include "app/cli/text_table.h"
#include "app/cli/units.h"
#include "core/flops.h"
#include "core/io/presets_json.h"
#include "core/kv_compare.h"

namespace attn::cli {
namespace {

using nlohmann::json;

struct Row {
  VariantForm form;
  std::optional<KvCacheSize> size;  // empty when the form is not possible
};

std::vector<Row> compute_rows(const KvRequest& r) {
  std::vector<Row> rows;
  for (const VariantForm& f : variant_forms(r.model)) {
    Row row{f, std::nullopt};
    if (f.shape) row.size = kv_cache_size(*f.shape, r.seq, r.batch, r.dtype);
    rows.push_back(row);
  }
  return rows;
}

std::string label(Variant v) {
  switch (v) {
    case Variant::Mha: return "MHA";
    case Variant::Gqa: return "GQA";
    case Variant::Mqa: return "MQA";
    case Variant::Mla: return "MLA";
  }
  return "";
}

std::string cached(const ModelShape& m) {
  // The forms of a model with decoupled RoPE: keys of head_dim + d_rope.
  const std::string keys =
      m.rope_dim > 0 ? ", keys " + thousands(m.head_dim) + " + " + thousands(m.rope_dim) : std::string();
  switch (m.variant) {
    case Variant::Mha: return plural(m.kv_heads, "KV head") + " (one per head)" + keys;
    case Variant::Gqa: return plural(m.kv_heads, "KV head") + keys;
    case Variant::Mqa: return "1 KV head" + keys;
    case Variant::Mla: return cached_latent_text(m);
  }
  return "";
}

// Why a row uses numbers the model does not have; empty for the model's own numbers and for MHA/MQA.
std::string choice_note(const Row& row, const ModelShape& model) {
  const int H = model.heads, d = model.head_dim;
  if (row.form.model_own) return "";
  if (row.form.variant == Variant::Gqa) {
    if (!row.form.shape)
      return "GQA: not possible with " + thousands(H) + (H == 1 ? " head" : " heads") + ": no G with 1 < G < " +
             thousands(H) + " divides " + thousands(H) + ".";
    const int G = row.form.shape->kv_heads;
    return "GQA: the model has no grouping of its own, so G = " + thousands(G) + " is used (" +
           (G == 8 ? "8 divides " + thousands(H) + ", as in Llama 3, Mistral 7B and Qwen2.5"
                   : "the largest divisor of " + thousands(H) + " below " + thousands(H)) +
           ").";
  }
  if (row.form.variant == Variant::Mla)
    return "MLA: the model has no latent of its own, so DeepSeek's proportions are used: d_c = 4 x head_dim = " +
           thousands(chosen_latent_dim(d)) + ", d_rope = head_dim / 2 = " + thousands(chosen_rope_dim(d)) + ".";
  return "";
}

// An MLA model scores with keys of head_dim + d_rope: its other forms cache keys that wide.
std::string rope_keys_note(const std::vector<Row>& rows) {
  const ModelShape& mha = *rows[0].form.shape;
  if (mha.rope_dim == 0) return "";
  return "MHA, GQA, MQA: keys of head_dim + d_rope = " + thousands(mha.head_dim) + " + " + thousands(mha.rope_dim) +
         " = " + thousands(key_dim(mha)) + ", as wide as the model's, and values of " + thousands(mha.head_dim) + ".";
}

// "(1/8)" when the total divides the MHA total exactly.
std::string fraction(std::uint64_t total, std::uint64_t mha_total) {
  if (total == 0 || total >= mha_total || mha_total % total != 0) return "";
  return "(1/" + thousands(mha_total / total) + ")";
}

std::string common_shape(const ModelShape& m) {
  std::string s = thousands(m.layers) + (m.layers == 1 ? " layer" : " layers");
  if (m.d_model > 0) s += ", d_model " + thousands(m.d_model);
  return s + ", " + thousands(m.heads) + (m.heads == 1 ? " query head" : " query heads") + ", head_dim " +
         thousands(m.head_dim);
}

}  // namespace

void print_kv_compare(std::ostream& out, const KvRequest& r) {
  const std::vector<Row> rows = compute_rows(r);
  const std::uint64_t mha_total = rows[0].size->total_bytes;
  out << r.model.name << " as each attention variant, everything else kept\n";
  out << "  " << common_shape(r.model) << '\n';
  if (has_sliding_window(r.model)) out << "  " << describe_window(r.model) << '\n';
  out << "Cache for " << describe_settings(r) << (has_sliding_window(r.model) ? "; totals are window-aware" : "")
      << "\n\n";

  std::vector<std::vector<std::string>> table{
      {"variant", "cached per token per layer", "elements", "bytes per token", "total bytes", "", "vs MHA", ""}};
  for (const Row& row : rows) {
    const std::string name = label(row.form.variant) + (row.form.variant == r.model.variant ? " *" : "");
    if (!row.size) {
      table.push_back({name, "not possible (see below)", "-", "-", "-", "", "-", ""});
      continue;
    }
    const KvCacheSize& s = *row.size;
    table.push_back({name, cached(*row.form.shape), thousands(s.elements_per_token_per_layer),
                     bits_in_bytes(s.bits_per_token), thousands(s.total_bytes), binary_size(s.total_bytes),
                     percent(s.total_bytes, mha_total), fraction(s.total_bytes, mha_total)});
  }
  print_table(out, table, {2, 3, 4, 5, 6});
  out << "\n* the model's own attention.\n";
  for (const Row& row : rows)
    if (const std::string note = choice_note(row, r.model); !note.empty()) out << note << '\n';
  if (const std::string note = rope_keys_note(rows); !note.empty()) out << note << '\n';
}

nlohmann::json kv_compare_json(const KvRequest& r) {
  const std::vector<Row> rows = compute_rows(r);
  const std::uint64_t mha_total = rows[0].size->total_bytes;
  json variants = json::array();
  for (const Row& row : rows) {
    json v = {{"variant", to_string(row.form.variant)},
              {"model_own", row.form.variant == r.model.variant},
              {"possible", row.size.has_value()}};
    if (row.size) {
      const ModelShape& m = *row.form.shape;
      const KvCacheSize& s = *row.size;
      if (m.variant == Variant::Mla) {
        v["latent_dim"] = m.latent_dim;
        v["rope_dim"] = m.rope_dim;
      } else {
        v["kv_heads"] = m.kv_heads;
        v["key_dim"] = key_dim(m);
      }
      v["attention_flops_per_pair"] = attention_flops_per_pair(m);
      v["elements_per_token_per_layer"] = s.elements_per_token_per_layer;
      v["bits_per_token"] = s.bits_per_token;
      v["bytes_per_token"] = bytes_per_token_json(s);
      v["total_bytes"] = s.total_bytes;
      v["total_bytes_full_attention"] = s.total_bytes_full_attention;
      v["ratio_vs_mha"] = static_cast<double>(s.total_bytes) / static_cast<double>(mha_total);
    }
    if (const std::string note = choice_note(row, r.model); !note.empty()) v["note"] = note;
    variants.push_back(v);
  }
  return {{"model", shape_to_json(r.model)},    {"seq", r.seq},
          {"seq_is_default", r.seq_is_default}, {"batch", r.batch},
          {"dtype", to_string(r.dtype)},        {"variants", variants}};
}

}  // namespace attn::cli
