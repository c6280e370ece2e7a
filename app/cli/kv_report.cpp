#include "app/cli/kv_report.h"

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <sstream>

#include "app/cli/text_table.h"
#include "app/cli/units.h"
#include "core/io/presets_json.h"

namespace attn::cli {
namespace {

using nlohmann::json;

std::string count(std::uint64_t n, const std::string& one, const std::string& many) {
  return thousands(n) + " " + (n == 1 ? one : many);
}

// "2 bytes", "0.5 bytes": int4 is half a byte.
std::string element_size(Dtype t) {
  const int bits = bits_per_element(t);
  if (bits % 8 != 0) return "0.5 bytes";
  return count(static_cast<std::uint64_t>(bits / 8), "byte", "bytes");
}

std::string elements_formula(const ModelShape& m) {
  const std::string d = thousands(static_cast<std::uint64_t>(m.head_dim)) + " head_dim";
  switch (m.variant) {
    case Variant::Mha: return "2 (key and value) x " + count(m.heads, "head", "heads") + " x " + d;
    case Variant::Gqa:
    case Variant::Mqa: return "2 (key and value) x " + count(m.kv_heads, "KV head", "KV heads") + " x " + d;
    case Variant::Mla:
      return thousands(m.latent_dim) + " (latent c_KV) + " + thousands(m.rope_dim) + " (decoupled RoPE key)";
  }
  return "";
}

// The traps worth a line: query heads that are not cached, and a head_dim that is not d_model / heads.
std::string notes(const ModelShape& m) {
  std::ostringstream out;
  if (m.variant == Variant::Gqa || m.variant == Variant::Mqa)
    out << "  Only the "
        << (m.kv_heads == 1 ? std::string("single KV head is") : thousands(m.kv_heads) + " KV heads are")
        << " cached; the " << thousands(m.heads) << " query heads add nothing to the cache.\n";
  if (m.variant == Variant::Mla)
    out << "  One latent per token serves every query head: keys and values are expanded from it, not cached.\n";
  if (m.d_model > 0 && m.head_dim > 0 && (m.d_model % m.heads != 0 || m.d_model / m.heads != m.head_dim)) {
    std::string ratio;
    if (m.d_model % m.heads == 0) ratio = std::to_string(m.d_model / m.heads);
    else ratio = format_number(static_cast<double>(m.d_model) / m.heads, 2);
    out << "  head_dim " << thousands(m.head_dim)
        << " is the model's own figure, not d_model / heads = " << thousands(m.d_model) << " / " << thousands(m.heads)
        << " = " << ratio << ".\n";
  }
  return out.str();
}

std::optional<std::uint64_t> longest_context(const KvRequest& r, const Accelerator& a) {
  return attn::longest_context(r.model, a.bytes, r.batch, r.dtype, static_cast<std::uint64_t>(kv_limits::kMaxTokens));
}

// "73,242 tokens in 24 GB, 244,140 in 80 GB, 430,297 in 141 GB" at the request's batch and dtype.
std::string longest_contexts_text(const KvRequest& r) {
  const std::string limit = thousands(static_cast<std::uint64_t>(kv_limits::kMaxTokens));
  if (std::ranges::none_of(kAccelerators, [&](const Accelerator& a) { return longest_context(r, a).has_value(); }))
    return "every context up to " + limit + " tokens, in each of " + std::string(kAccelerators[0].label) + ", " +
           kAccelerators[1].label + " and " + kAccelerators[2].label;
  std::string s;
  for (const Accelerator& a : kAccelerators) {
    const std::optional<std::uint64_t> n = longest_context(r, a);
    s += (s.empty() ? "" : ", ") + (n ? thousands(*n) : "over " + limit) + (s.empty() ? " tokens" : "") + " in " +
         a.label;
  }
  return s;
}

json longest_contexts_json(const KvRequest& r) {
  json out = json::array();
  for (const Accelerator& a : kAccelerators) {
    const std::optional<std::uint64_t> n = longest_context(r, a);
    out.push_back({{"bytes", a.bytes}, {"tokens", n ? json(*n) : json(nullptr)}});
  }
  return out;
}

// " = 1.5, rounded up to whole bytes" when `bits` ends in part of a byte, so the equation before it still holds.
std::string rounding(std::uint64_t bits) {
  return bits % 8 == 0 ? "" : " = " + bits_in_bytes(bits) + ", rounded up to whole bytes";
}

// "0.5 bytes x 3 tokens x batch 1 = 1.5, rounded up to whole bytes": a total as bytes per token times the tokens.
std::string per_token_product(const KvRequest& r, const KvCacheSize& s, std::uint64_t total_bits) {
  return bits_text(s.bits_per_token) + " x " + count(r.seq, "token", "tokens") + " x batch " + thousands(r.batch) +
         rounding(total_bits);
}

void line(std::ostream& out, const std::string& label, const std::string& value) {
  out << std::left << std::setw(31) << label << value << '\n';
}

void print_window_totals(std::ostream& out, const KvRequest& r, const KvCacheSize& s) {
  // Token-layer slots held: seq in each global layer, min(seq, window) in each local one.
  const std::string local_slots =
      count(s.local_layer_count, "layer", "layers") + " x " + count(s.local_tokens, "token", "tokens");
  const std::string global_slots = count(s.global_layer_count, "layer", "layers") + " x " + thousands(r.seq);
  const std::string slots = s.global_layer_count == 0 ? local_slots : "(" + global_slots + " + " + local_slots + ")";
  line(out, "Total KV cache, window-aware:", bytes_text(s.total_bytes));
  line(out, "",
       "= " + thousands(s.elements_per_token_per_layer) + " x " + element_size(r.dtype) + " x " + slots + " x batch " +
           thousands(r.batch) + rounding(s.total_bits));
  line(out, "Total with full attention:",
       bytes_text(s.total_bytes_full_attention) + " = " + per_token_product(r, s, s.total_bits_full_attention));
}

// Why the two totals differ (or do not, yet).
void print_window_note(std::ostream& out, const KvRequest& r, const KvCacheSize& s) {
  const ModelShape& m = r.model;
  const std::string W = thousands(static_cast<std::uint64_t>(m.window));
  if (r.seq <= static_cast<std::uint64_t>(m.window)) {
    out << "  At " << count(r.seq, "token", "tokens") << " no sliding-window layer has filled its " << W
        << "-token window yet, so both totals agree.\n";
    return;
  }
  if (s.global_layer_count == 0)
    out << "  Every layer is a sliding-window layer (a rolling buffer) that keeps only the last " << W << " tokens,\n";
  else
    out << "  The " << count(s.local_layer_count, "sliding-window layer keeps", "sliding-window layers keep")
        << " only the last " << W << " tokens; the "
        << count(s.global_layer_count, "global layer keeps", "global layers keep") << " all " << thousands(r.seq)
        << ",\n";
  out << "  so the real cache is " << percent(s.total_bytes, s.total_bytes_full_attention)
      << " of the full-attention figure.\n";
}

}  // namespace

std::string describe_shape(const ModelShape& m) {
  std::string s = upper(to_string(m.variant)) + ", " + count(m.layers, "layer", "layers");
  if (m.d_model > 0) s += ", d_model " + thousands(m.d_model);
  switch (m.variant) {
    case Variant::Mha: s += ", " + count(m.heads, "head", "heads") + " (each its own key and value)"; break;
    case Variant::Gqa:
    case Variant::Mqa:
      s += ", " + count(m.heads, "query head", "query heads") + " sharing " + count(m.kv_heads, "KV head", "KV heads");
      break;
    case Variant::Mla: s += ", " + count(m.heads, "head", "heads"); break;
  }
  if (m.head_dim > 0) s += ", head_dim " + thousands(m.head_dim);
  if (m.variant == Variant::Mla) s += ", cached " + cached_latent_text(m);
  return s;
}

std::string describe_settings(const KvRequest& r) {
  return count(r.seq, "token", "tokens") + (r.seq_is_default ? " (the default; change with --seq)" : "") + ", batch " +
         thousands(r.batch) + ", " + std::string(to_string(r.dtype)) + " (" +
         std::to_string(bits_per_element(r.dtype)) + " bits per number)";
}

std::string describe_window(const ModelShape& m) {
  if (!has_sliding_window(m)) return "";
  const std::string W = "sliding window of " + thousands(m.window) + " tokens";
  const int global = global_layer_count(m);
  if (global == 0) return W + " on every layer (a rolling buffer)";
  return W + " on " + thousands(m.layers - global) + " of " + thousands(m.layers) + " layers (" +
         std::to_string(m.local_layers) + " local : " + std::to_string(m.global_layers) +
         " global, repeating); the other " + count(global, "attends", "attend") + " to every token";
}

void print_kv(std::ostream& out, const KvRequest& r) {
  const ModelShape& m = r.model;
  const KvCacheSize s = kv_cache_size(m, r.seq, r.batch, r.dtype);
  out << "Model: " << m.name << "\n  " << describe_shape(m) << '\n';
  if (has_sliding_window(m)) out << "  " << describe_window(m) << '\n';
  out << "  source: " << m.source << '\n';
  out << "Cache for " << describe_settings(r) << "\n\n";

  line(out, "Elements per token per layer:", thousands(s.elements_per_token_per_layer) + " = " + elements_formula(m));
  line(out, "Bytes per token (" + count(m.layers, "layer", "layers") + "):",
       bits_size_text(s.bits_per_token) + " = " + thousands(s.elements_per_token_per_layer) + " x " +
           count(m.layers, "layer", "layers") + " x " + element_size(r.dtype));
  if (has_sliding_window(m)) {
    print_window_totals(out, r, s);
  } else {
    line(out, "Total KV cache:", bytes_text(s.total_bytes) + " = " + per_token_product(r, s, s.total_bits));
  }
  if (!s.whole_bytes)
    out << "  int4 packs two numbers per byte; an odd count leaves half a byte, counted as a whole one.\n";
  line(out, "Longest context that fits:", longest_contexts_text(r));
  if (has_sliding_window(m)) print_window_note(out, r, s);
  if (const std::string n = notes(m); !n.empty()) out << '\n' << n;
}

json bytes_per_token_json(const KvCacheSize& s) {
  // Exact, so bytes_per_token x seq x batch is the total before rounding.
  if (s.bits_per_token % 8 == 0) return s.bytes_per_token;
  return static_cast<double>(s.bits_per_token) / 8.0;
}

json kv_json(const KvRequest& r) {
  const KvCacheSize s = kv_cache_size(r.model, r.seq, r.batch, r.dtype);
  return {
      {"model", shape_to_json(r.model)},
      {"seq", r.seq},
      {"seq_is_default", r.seq_is_default},
      {"batch", r.batch},
      {"dtype", to_string(r.dtype)},
      {"bits_per_element", bits_per_element(r.dtype)},
      {"elements_per_token_per_layer", s.elements_per_token_per_layer},
      {"bits_per_token", s.bits_per_token},
      {"bytes_per_token", bytes_per_token_json(s)},
      {"total_bytes", s.total_bytes},
      {"total_bytes_full_attention", s.total_bytes_full_attention},
      {"local_layer_count", s.local_layer_count},
      {"global_layer_count", s.global_layer_count},
      {"tokens_per_local_layer", s.local_tokens},
      {"whole_bytes", s.whole_bytes},
      {"longest_context", longest_contexts_json(r)},
  };
}

void print_preset_list(std::ostream& out, const std::vector<ModelShape>& presets, const std::string& file) {
  out << "Presets in " << file << " (use: attention-lab kv --preset NAME)\n\n";
  std::vector<std::vector<std::string>> rows{
      {"name", "variant", "layers", "d_model", "heads", "KV heads", "head_dim", "latent + RoPE", "sliding window"}};
  for (const ModelShape& m : presets) {
    const bool mla = m.variant == Variant::Mla;
    std::string window = "-";
    if (has_sliding_window(m))
      window = thousands(m.window) + (m.global_layers == 0 ? " (every layer)"
                                                           : " (" + std::to_string(m.local_layers) + " local : " +
                                                                 std::to_string(m.global_layers) + " global)");
    rows.push_back({m.name, upper(to_string(m.variant)), thousands(m.layers),
                    m.d_model > 0 ? thousands(m.d_model) : "-", thousands(m.heads), mla ? "-" : thousands(m.kv_heads),
                    thousands(m.head_dim), mla ? thousands(m.latent_dim) + " + " + thousands(m.rope_dim) : "-",
                    window});
  }
  print_table(out, rows, {2, 3, 4, 5, 6, 7});
  out << "\nSources:\n";
  for (const ModelShape& m : presets) out << "  " << m.name << ": " << m.source << '\n';
}

json preset_list_json(const std::vector<ModelShape>& presets, const std::string& file) {
  json models = json::array();
  for (const ModelShape& m : presets) models.push_back(shape_to_json(m));
  return {{"presets_file", file}, {"models", models}};
}

}  // namespace attn::cli
