// The KV-cache memory model, Tables 1-2 of 2604.00965, the FLOP counts and the variant forms,
// against values worked out by hand in the comments.
#include <doctest/doctest.h>

#include <limits>

#include "core/flops.h"
#include "core/io/presets_json.h"
#include "core/kv_compare.h"
#include "core/memory.h"
#include "core/validate.h"

using namespace attn;

namespace {

ModelShape preset(const std::string& name) {
  static const std::vector<ModelShape> all = load_presets_file(std::string(ATTN_ASSETS_DIR) + "/presets/models.json");
  for (const ModelShape& m : all)
    if (m.name == name) return m;
  FAIL("no preset " << name);
  return {};
}

ModelShape gqa(int layers, int heads, int kv_heads, int head_dim) {
  ModelShape m;
  m.name = "test";
  m.variant = Variant::Gqa;
  m.layers = layers;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.head_dim = head_dim;
  return m;
}

std::string shape_error(const ModelShape& m, bool options) {
  try {
    validate_shape(m, {options ? "" : "models[3].", options});
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("dtypes: names and bits per element") {
  const std::pair<Dtype, int> bits[] = {{Dtype::FP32, 32}, {Dtype::FP16, 16}, {Dtype::BF16, 16},
                                        {Dtype::FP8, 8},   {Dtype::INT8, 8},  {Dtype::INT4, 4}};
  for (auto [t, b] : bits) {
    const std::string dtype(to_string(t));  // CAPTURE is a lambda: not a structured binding (Clang 14)
    CAPTURE(dtype);
    CHECK(bits_per_element(t) == b);
    CHECK(parse_dtype(to_string(t)) == t);
  }
  CHECK(to_string(Dtype::BF16) == "bf16");
  CHECK(to_string(Dtype::INT4) == "int4");
  CHECK_FALSE(parse_dtype("fp64").has_value());
  CHECK_FALSE(parse_dtype("BF16").has_value());
  CHECK(dtype_names() == "fp32 | fp16 | bf16 | fp8 | int8 | int4");
}

TEST_CASE("elements per token per layer: mha 2Hd, gqa 2Gd, mqa 2d, mla d_c + d_rope") {
  // The MHA, GQA and MQA forms of DeepSeek V3 cache keys of 128 + 64 and values of 128: H·320, G·320, 320.
  const auto v3 = variant_forms(preset("deepseek-v3"));
  CHECK(key_dim(*v3[0].shape) == 192);
  CHECK(kv_elements_per_token_per_layer(*v3[0].shape) == 40960);
  CHECK(kv_elements_per_token_per_layer(*v3[1].shape) == 2560);  // G = 8
  CHECK(kv_elements_per_token_per_layer(*v3[2].shape) == 320);
  CHECK(key_dim(preset("llama-3-70b")) == 128);
  CHECK(kv_elements_per_token_per_layer(preset("gpt-2-small")) == 1536);  // 2 x 12 x 64
  CHECK(kv_elements_per_token_per_layer(preset("llama-3-70b")) == 2048);  // 2 x 8 x 128
  CHECK(kv_elements_per_token_per_layer(preset("falcon-7b")) == 128);     // 2 x 1 x 64
  CHECK(kv_elements_per_token_per_layer(preset("deepseek-v2")) == 576);   // 512 + 64
  CHECK(kv_elements_per_token_per_layer(preset("deepseek-v3")) == 576);
}

TEST_CASE("Llama 3 70B in bf16: 327,680 bytes per token, exactly 10 GiB at 32,768 tokens") {
  // 2 x 8 KV heads x 128 = 2,048 numbers per layer; x 80 layers x 2 bytes = 327,680 bytes per token;
  // x 32,768 tokens = 10,737,418,240 = 10 x 2^30.
  const KvCacheSize s = kv_cache_size(preset("llama-3-70b"), 32768, 1, Dtype::BF16);
  CHECK(s.elements_per_token_per_layer == 2048);
  CHECK(s.bytes_per_token == 327680);
  CHECK(s.total_bytes == 10737418240ull);
  CHECK(s.total_bytes == 10ull << 30);
  CHECK(s.total_bytes_full_attention == s.total_bytes);
  CHECK(s.global_layer_count == 80);
  CHECK(s.local_layer_count == 0);
  CHECK(s.whole_bytes);
  // Qwen2.5 72B has the same attention shape, so the same cache.
  CHECK(kv_cache_size(preset("qwen2.5-72b"), 32768, 1, Dtype::BF16).total_bytes == 10737418240ull);
}

TEST_CASE("trap: the KV heads, not the query heads, decide the size") {
  // Same G = 8: 64 or 32 query heads cache the same 2 x 8 x 128 numbers per layer.
  CHECK(kv_cache_size(gqa(80, 64, 8, 128), 1, 1, Dtype::BF16).bytes_per_token == 327680);
  CHECK(kv_cache_size(gqa(80, 32, 8, 128), 1, 1, Dtype::BF16).bytes_per_token == 327680);
  // Counting the 64 query heads instead would claim 8 times as much.
  CHECK(kv_cache_size(gqa(80, 64, 64, 128), 1, 1, Dtype::BF16).bytes_per_token == 8 * 327680);
}

TEST_CASE("trap: head_dim is its own field (Gemma 3 27B: 128, not 5376 / 32 = 168)") {
  const ModelShape g = preset("gemma-3-27b");
  CHECK(g.d_model / g.heads == 168);
  CHECK(g.head_dim == 128);
  CHECK(kv_elements_per_token_per_layer(g) == 4096);  // 2 x 16 x 128, not 2 x 16 x 168 = 5,376
}

TEST_CASE("trap: Falcon 7B has a single KV head for its 71 query heads") {
  const ModelShape f = preset("falcon-7b");
  CHECK(f.variant == Variant::Mqa);
  CHECK(f.heads == 71);
  CHECK(f.kv_heads == 1);
  // 2 x 64 = 128 numbers x 32 layers x 2 bytes = 8,192 bytes per token; x 32,768 = 268,435,456 (256 MiB).
  const KvCacheSize s = kv_cache_size(f, 32768, 1, Dtype::BF16);
  CHECK(s.bytes_per_token == 8192);
  CHECK(s.total_bytes == 268435456);
}

TEST_CASE("Gemma 3 27B: 5 local : 1 global, layer i is global iff (i+1) % 6 == 0") {
  const ModelShape g = preset("gemma-3-27b");
  CHECK_FALSE(is_global_layer(g, 0));
  CHECK_FALSE(is_global_layer(g, 4));
  CHECK(is_global_layer(g, 5));
  CHECK(is_global_layer(g, 11));
  CHECK(is_global_layer(g, 59));
  CHECK_FALSE(is_global_layer(g, 60));
  CHECK_FALSE(is_global_layer(g, 61));
  int counted = 0;
  for (int i = 0; i < g.layers; ++i) counted += is_global_layer(g, i) == ((i + 1) % 6 == 0) ? 1 : 0;
  CHECK(counted == 62);
  CHECK(global_layer_count(g) == 10);  // layers 5, 11, ..., 59
}

TEST_CASE("Gemma 3 27B window-aware total at 32,768 tokens, by hand") {
  // Per layer per token: 2 x 16 x 128 = 4,096 numbers x 2 bytes = 8,192 bytes.
  // Bytes per token, all 62 layers: 8,192 x 62 = 507,904.
  // Full attention: 507,904 x 32,768 = 16,642,998,272 (15.5 GiB).
  // Window-aware: 10 global layers x 32,768 tokens x 8,192 = 2,684,354,560
  //             + 52 local layers x 1,024 tokens x 8,192 =   436,207,616
  //                                                        = 3,120,562,176 (2.91 GiB).
  const KvCacheSize s = kv_cache_size(preset("gemma-3-27b"), 32768, 1, Dtype::BF16);
  CHECK(s.bytes_per_token == 507904);
  CHECK(s.total_bytes_full_attention == 16642998272ull);
  CHECK(s.total_bytes == 3120562176ull);
  CHECK(s.local_layer_count == 52);
  CHECK(s.global_layer_count == 10);
  CHECK(s.local_tokens == 1024);
}

TEST_CASE("the longest context an accelerator holds, by hand") {
  // Llama 3 70B, bf16: 327,680 bytes per token. 24e9 / 327,680 = 73,242.19; 80e9 / 327,680 = 244,140.63;
  // 141e9 / 327,680 = 430,297.85.
  const ModelShape llama = preset("llama-3-70b");
  CHECK(longest_context(llama, 24'000'000'000, 1, Dtype::BF16, 1u << 30) == 73242u);
  CHECK(longest_context(llama, 80'000'000'000, 1, Dtype::BF16, 1u << 30) == 244140u);
  CHECK(longest_context(llama, 141'000'000'000, 1, Dtype::BF16, 1u << 30) == 430297u);
  CHECK(longest_context(llama, 80'000'000'000, 2, Dtype::BF16, 1u << 30) == 122070u);  // batch 2: half
  // Exactly 80e9 bytes is 244,140.625 tokens: 244,140 fit, 244,141 do not.
  CHECK(kv_cache_size(llama, 244140, 1, Dtype::BF16).total_bytes <= 80'000'000'000u);
  CHECK(kv_cache_size(llama, 244141, 1, Dtype::BF16).total_bytes > 80'000'000'000u);
  // Gemma 3 27B past its window: 8,192 x (10 x seq + 52 x 1,024) bytes = 81,920 seq + 436,207,616.
  // (24e9 - 436,207,616) / 81,920 = 287,643.95; (80e9 - ...) / 81,920 = 971,237.70.
  const ModelShape gemma = preset("gemma-3-27b");
  CHECK(longest_context(gemma, 24'000'000'000, 1, Dtype::BF16, 1u << 30) == 287643u);
  CHECK(longest_context(gemma, 80'000'000'000, 1, Dtype::BF16, 1u << 30) == 971237u);
  // Everything up to the limit fits: no longest context below it.
  CHECK_FALSE(longest_context(llama, 80'000'000'000, 1, Dtype::BF16, 1024).has_value());
  // A cache too large to count does not fit: a batch of 2^40 sequences holds no token in 24 GB.
  CHECK(longest_context(llama, 24'000'000'000, std::uint64_t{1} << 40, Dtype::BF16, 1u << 30) == 0u);
}

TEST_CASE("Mistral 7B: a 4,096-token rolling buffer on every layer") {
  // 2 x 8 x 128 = 2,048 numbers x 32 layers x 2 bytes = 131,072 bytes per token.
  // Full attention at 32,768 tokens: 131,072 x 32,768 = 4,294,967,296 (4 GiB).
  // Every layer keeps 4,096 tokens: 131,072 x 4,096 = 536,870,912 (512 MiB).
  const ModelShape m = preset("mistral-7b");
  CHECK(global_layer_count(m) == 0);
  CHECK_FALSE(is_global_layer(m, 0));
  const KvCacheSize s = kv_cache_size(m, 32768, 1, Dtype::BF16);
  CHECK(s.bytes_per_token == 131072);
  CHECK(s.total_bytes_full_attention == 4294967296ull);
  CHECK(s.total_bytes == 536870912ull);
  // Within the window nothing is dropped: 131,072 x 1,000 either way.
  const KvCacheSize short_seq = kv_cache_size(m, 1000, 1, Dtype::BF16);
  CHECK(short_seq.total_bytes == 131072000ull);
  CHECK(short_seq.total_bytes_full_attention == 131072000ull);
}

TEST_CASE("a layer count that is not a multiple of the group: the partial group is all local") {
  ModelShape m = gqa(8, 4, 2, 4);
  m.window = 2;
  m.local_layers = 5;
  m.global_layers = 1;
  CHECK(global_layer_count(m) == 1);  // layers 0-4 local, 5 global, 6-7 local
  m.layers = 11;
  CHECK(global_layer_count(m) == 1);  // 6-10 local
  m.layers = 12;
  CHECK(global_layer_count(m) == 2);
  m.local_layers = 1;
  m.global_layers = 2;
  m.layers = 4;  // L G G L
  CHECK(global_layer_count(m) == 2);
  CHECK_FALSE(is_global_layer(m, 3));
}

TEST_CASE("dtype and batch scale the totals -- int4 is counted in bits") {
  const ModelShape l = preset("llama-3-70b");
  CHECK(kv_cache_size(l, 32768, 1, Dtype::FP32).total_bytes == 20ull << 30);
  CHECK(kv_cache_size(l, 32768, 1, Dtype::FP8).total_bytes == 5ull << 30);
  CHECK(kv_cache_size(l, 32768, 4, Dtype::BF16).total_bytes == 40ull << 30);
  const KvCacheSize q = kv_cache_size(l, 32768, 1, Dtype::INT4);  // 2,048 x 80 x 4 bits / 8 = 81,920
  CHECK(q.bytes_per_token == 81920);
  CHECK(q.total_bytes == 2684354560ull);  // 2.5 GiB
  CHECK(q.whole_bytes);
  // An odd count in int4 leaves half a byte: 513 numbers x 4 bits = 2,052 bits = 256.5 bytes -> 257.
  ModelShape odd;
  odd.variant = Variant::Mla;
  odd.latent_dim = 513;
  const KvCacheSize o = kv_cache_size(odd, 1, 1, Dtype::INT4);
  CHECK(o.bits_per_token == 2052);
  CHECK(o.bytes_per_token == 257);
  CHECK(o.total_bits == 2052);
  CHECK(o.total_bytes == 257);
  CHECK_FALSE(o.whole_bytes);
  CHECK(kv_cache_size(odd, 2, 1, Dtype::INT4).total_bytes == 513);  // 4,104 bits, exact again
  CHECK(kv_cache_size(odd, 3, 1, Dtype::INT4).total_bits_full_attention == 6156);
}

TEST_CASE("overflow is an error, never a wrapped number") {
  // 2 x 65,536 x 65,536 numbers x 65,536 layers x 16 bits = 2^53 bits per token; x 2^30 tokens = 2^83.
  const ModelShape huge = gqa(65536, 65536, 65536, 65536);
  CHECK_THROWS_WITH_AS(kv_cache_size(huge, std::uint64_t{1} << 30, 1, Dtype::BF16),
                       "the KV cache size in bits exceeds the 64-bit limit of 18,446,744,073,709,551,615",
                       OverflowError);
  CHECK_NOTHROW(kv_cache_size(huge, 1, 1, Dtype::BF16));  // 2^53 bits: still fits
  CHECK_THROWS_AS(checked_mul(std::uint64_t{1} << 32, std::uint64_t{1} << 32, "x"), OverflowError);
  CHECK(checked_mul(std::uint64_t{1} << 31, std::uint64_t{1} << 32, "x") == std::uint64_t{1} << 63);
  CHECK_THROWS_AS(checked_add(std::numeric_limits<std::uint64_t>::max(), 1, "x"), OverflowError);
}

TEST_CASE("Table 1: stored floats of multi-head attention, and its GQA form") {
  // Small, by hand: H = 2, N_KV = 3, d_QK = d_head = 4, d_in = 5, d_out = 6.
  // cache 2·3·(4+4) = 48; 2·H·d_in·d_QK = 2·2·5·4 = 80; H·d_head·(d_in+d_out) = 2·4·11 = 88; total 216.
  const StoredFloats small = table1_stored_floats({2, 2, 3, 4, 4, 5, 6});
  CHECK(small.cache == 48);
  CHECK(small.weights == 168);
  CHECK(small.total() == 216);
  // Llama 3 70B, one layer, 32,768 cached tokens, GQA form with G = 8, H = 64, d = 128, d_in = d_out = 8,192:
  // cache 8·32,768·256 = 67,108,864; W_Q 64·8,192·128 = 67,108,864; W_K = W_V = 8·8,192·128 = 8,388,608;
  // W_O 64·128·8,192 = 67,108,864; total 218,103,808.
  const StoredFloats llama = table1_stored_floats({64, 8, 32768, 128, 128, 8192, 8192});
  CHECK(llama.cache == 67108864);
  CHECK(llama.weights == 150994944);
  CHECK(llama.total() == 218103808);
  CHECK(stored_floats_per_layer(preset("llama-3-70b"), 32768).total() == 218103808);
  // As MHA (G = H = 64) the same layer would store 64·32,768·256 + 2·64·8,192·128 + 64·128·16,384 = 805,306,368.
  CHECK(table1_stored_floats({64, 64, 32768, 128, 128, 8192, 8192}).total() == 805306368);
  // The GQA form with G = H is Table 1 exactly, also when d_QK != d_head and d_in != d_out:
  // H N (dqk + dh) + 2 H din dqk + H dh (din + dout) = 3·7·(2+5) + 2·3·11·2 + 3·5·(11+13) = 147 + 132 + 360 = 639.
  CHECK(table1_stored_floats({3, 3, 7, 2, 5, 11, 13}).total() == 639);
}

TEST_CASE("Table 1 over every layer: sliding-window layers hold the window, so the cache row agrees with the bar") {
  const ModelShape gemma = preset("gemma-3-27b");
  // 10 global layers of 32,768 tokens and 52 local ones of 1,024, each token 16 KV heads x (128 + 128) floats:
  // 4,096 x (10 x 32,768 + 52 x 1,024) = 1,560,281,088 floats, 3,120,562,176 bytes in bf16 (the bar's 2.91 GiB).
  const StoredFloats all = stored_floats_all_layers(gemma, 32768);
  CHECK(all.cache == 1560281088ull);
  CHECK(all.cache * 2 == kv_cache_size(gemma, 32768, 1, Dtype::BF16).total_bytes);
  // W_Q 32·5,376·128 + W_K and W_V 16·5,376·128 each + W_O 32·128·5,376 = 66,060,288 a layer, 62 layers.
  CHECK(all.weights == 66060288ull * 62);
  // Without a window every layer holds every token: 80 times one layer.
  const ModelShape llama = preset("llama-3-70b");
  CHECK(stored_floats_all_layers(llama, 32768).cache == stored_floats_per_layer(llama, 32768).cache * 80);
  // Shorter than the window: local layers hold every token too.
  CHECK(stored_floats_all_layers(gemma, 512).cache == stored_floats_per_layer(gemma, 512).cache * 62);
}

TEST_CASE("Table 2: stored floats of latent attention") {
  // DeepSeek V2, one layer, 32,768 tokens, d_L = 512, d_in = d_out = 5,120, 128 heads:
  // N_KV·d_L = 16,777,216; d_in·d_L = 2,621,440; N_heads·d_L·(d_in + d_out) = 128·512·10,240 = 671,088,640.
  const StoredFloats f = table2_stored_floats({128, 32768, 512, 5120, 5120});
  CHECK(f.cache == 16777216);
  CHECK(f.weights == 673710080);
  CHECK(f.total() == 690487296);
  CHECK(stored_floats_per_layer(preset("deepseek-v2"), 32768).total() == 690487296);
  // DeepSeek V3 as MHA follows Table 1 with d_QK = 192 (128 + 64), d_head = 128: one token caches 128·(192 + 128);
  // W_Q, W_K, W_V and W_O hold 128·7,168·(192 + 192 + 128 + 128).
  const StoredFloats mha = stored_floats_per_layer(*variant_forms(preset("deepseek-v3"))[0].shape, 1);
  CHECK(mha.cache == 40960);
  CHECK(mha.weights == 587202560);
  // Small, by hand: 2 heads, 3 tokens, d_L 4, d_in 5, d_out 6: 12 + 20 + 2·4·11 = 120.
  CHECK(table2_stored_floats({2, 3, 4, 5, 6}).total() == 120);
}

TEST_CASE("FLOPs per pair: C_attn = 4·H·d, absorbed MLA 2·H·(d_c + d_R) + 2·H·d_c, indexer 2·H_I·d_I") {
  // The scores read the 512-dim latent and the 64-dim RoPE key, the sum the latent: 2·128·576 + 2·128·512.
  CHECK(attention_flops_per_pair(preset("deepseek-v3")) == 278528);
  CHECK(attention_flops_per_pair(preset("deepseek-v2")) == 278528);
  CHECK(indexer_flops_per_pair(64, 128) == 16384);                 // 2·64·128
  CHECK(attention_flops_per_pair(preset("gpt-2-small")) == 3072);  // 4·12·64
  // Sharing KV heads saves memory, not attention FLOPs: 4·64·128 for Llama 3 70B as for its MHA form.
  CHECK(attention_flops_per_pair(preset("llama-3-70b")) == 32768);
  CHECK(attention_flops_per_pair(*variant_forms(preset("llama-3-70b"))[0].shape) == 32768);
  // MLA without a RoPE key: 4·H·d_c.
  ModelShape no_rope = preset("deepseek-v3");
  no_rope.rope_dim = 0;
  CHECK(attention_flops_per_pair(no_rope) == 262144);
  // DeepSeek V3 as MHA, GQA or MQA scores 192-dim keys (128 + 64) and sums 128-dim values: 2·128·192 + 2·128·128.
  for (const VariantForm& f : variant_forms(preset("deepseek-v3")))
    if (f.variant != Variant::Mla) CHECK(attention_flops_per_pair(*f.shape) == 81920);
}

TEST_CASE("FLOPs: prefill with and without a causal mask, decode with and without a cache") {
  const ModelShape g = preset("gpt-2-small");
  CHECK(attention_pairs(4, true) == 10);  // 4·5/2
  CHECK(attention_pairs(4, false) == 16);
  CHECK(attention_pairs(5, true) == 15);
  CHECK(prefill_attention_flops(g, 4, true) == 30720);   // 3,072·10
  CHECK(prefill_attention_flops(g, 4, false) == 49152);  // 3,072·16
  // Projections of one token: 2 x (W_Q + W_K + W_V + W_O) = 2 x 4·12·768·64 = 4,718,592.
  CHECK(projection_flops_per_token(g) == 4718592);
  // Decode at L = 10 with a cache: 3,072·10 + 4,718,592.
  CHECK(decode_step_flops_cached(g, 10) == 4749312);
  // Without: all 10 tokens projected again and 55 causal pairs: 10·4,718,592 + 3,072·55.
  CHECK(decode_step_flops_uncached(g, 10) == 47354880);
  CHECK(decode_step_flops_uncached(g, 10) == prefill_flops(g, 10, true));
  // MLA projections follow Table 2: 2 x (d_in·d_L + H·d_L·(d_in + d_out)) = 2 x 943,194,112 for DeepSeek V3.
  CHECK(projection_flops_per_token(preset("deepseek-v3")) == 1886388224);
  // n(n+1)/2 near the limit is an error, not a wrap.
  CHECK_THROWS_AS(attention_pairs(std::numeric_limits<std::uint64_t>::max(), true), OverflowError);
  CHECK_THROWS_AS(attention_pairs(std::uint64_t{1} << 40, false), OverflowError);
}

TEST_CASE("FLOPs: DeepSeek Sparse Attention against vanilla attention") {
  const std::uint64_t c_attn = 278528, c_idx = 16384;
  // L = 32,768, k = 2,048: vanilla 278,528·32,768 = 9,126,805,504;
  // DSA 16,384·32,768 + 278,528·2,048 = 536,870,912 + 570,425,344 = 1,107,296,256.
  CHECK(flops_vanilla(c_attn, 32768) == 9126805504ull);
  CHECK(flops_dsa(c_attn, c_idx, 32768, 2048) == 1107296256ull);
  // Fewer keys than k: every key is attended, so DSA only adds the indexer.
  CHECK(flops_dsa(c_attn, c_idx, 100, 2048) == 16384ull * 100 + 278528ull * 100);
}

TEST_CASE("FLOPs: where sparse attention starts to pay, and a model too small for the indexer to pay at all") {
  // DeepSeek V3.2, k = 2,048: L > 2,048 · 278,528 / (278,528 - 16,384) = 2,176 exactly, so from L = 2,177 on.
  CHECK(dsa_break_even(278528, 16384, 2048) == 2177u);
  CHECK(flops_dsa(278528, 16384, 2176, 2048) == flops_vanilla(278528, 2176));  // 606,076,928 both
  CHECK(flops_dsa(278528, 16384, 2177, 2048) < flops_vanilla(278528, 2177));
  CHECK(flops_dsa(278528, 16384, 2175, 2048) > flops_vanilla(278528, 2175));
  // Leaving out the RoPE term (4·128·512 = 262,144) moved it to L > 2,184.53: from 2,185 on.
  CHECK(dsa_break_even(262144, 16384, 2048) == 2185u);
  // An exact equality is not a saving: k · C_attn / (C_attn - C_idx) = 4 · 2 / 1 = 8 costs the same; 9 is less.
  CHECK(dsa_break_even(2, 1, 4) == 9u);
  CHECK(flops_dsa(2, 1, 8, 4) == flops_vanilla(2, 8));
  // GPT-2 small: C_attn = 4 · 12 · 64 = 3,072 < C_idx = 16,384: the indexer alone costs more per pair.
  CHECK_FALSE(dsa_break_even(3072, 16384, 2048).has_value());
  CHECK_FALSE(dsa_break_even(16384, 16384, 2048).has_value());
}

TEST_CASE("shape validation names the field, in file form and in option form") {
  ModelShape m = gqa(80, 64, 7, 128);
  CHECK(shape_error(m, false) == "models[3].kv_heads: must divide heads (64) but found 7");
  CHECK(shape_error(m, true) == "--kv-heads: must divide --heads (64) but found 7");
  m.kv_heads = 128;
  CHECK(shape_error(m, false) == "models[3].kv_heads: must divide heads (64) but found 128");
  m = gqa(80, 64, 8, 128);
  CHECK(shape_error(m, false) == "(no error)");
  m.variant = Variant::Mha;
  CHECK(shape_error(m, false) ==
        "models[3].kv_heads: must equal heads (64) for mha, one key/value head per query head, but found 8");
  m.variant = Variant::Mqa;
  CHECK(shape_error(m, true) == "--kv-heads: must be 1 for mqa but found 8");
  m = gqa(80, 64, 8, 128);
  m.latent_dim = 512;
  CHECK(shape_error(m, false) == "models[3].latent_dim: only used by mla (this is gqa)");
  m.variant = Variant::Mla;
  m.kv_heads = 64;
  m.latent_dim = 0;
  CHECK(shape_error(m, true) == "--latent-dim: must be >= 1 for mla, the width of the cached latent (found 0)");
  m.latent_dim = 512;
  CHECK(shape_error(m, true) == "(no error)");
  m.rope_dim = 63;  // as a scenario's rope_dim: RoPE turns pairs
  CHECK(shape_error(m, false) == "models[3].rope_dim: rope turns pairs of dimensions, so it must be even (found 63)");
  m.rope_dim = 64;
  CHECK(shape_error(m, true) == "(no error)");
  m = gqa(0, 64, 8, 128);
  CHECK(shape_error(m, false) == "models[3].layers: must be >= 1 (found 0)");
  m = gqa(80, 64, 8, 0);
  CHECK(shape_error(m, true) == "--head-dim: must be >= 1 (found 0)");
}

TEST_CASE("shape validation of the sliding-window pattern") {
  ModelShape m = gqa(62, 32, 16, 128);
  m.local_layers = 5;
  CHECK(shape_error(m, false) == "models[3].local_layers: given, but window is not set");
  CHECK(shape_error(m, true) == "--local-layers: given, but --window is not set");
  m.window = 1024;
  m.local_layers = 0;
  CHECK(shape_error(m, false) == "models[3].local_layers: must be >= 1 (found 0)");
  m.local_layers = 5;
  m.global_layers = 1;
  CHECK(shape_error(m, false) == "(no error)");
}

TEST_CASE("variant forms for --compare") {
  CHECK(chosen_gqa_kv_heads(128) == 8);
  CHECK(chosen_gqa_kv_heads(32) == 8);
  CHECK(chosen_gqa_kv_heads(12) == 6);  // 8 does not divide 12; 12 / 2
  CHECK(chosen_gqa_kv_heads(8) == 4);   // 8 itself would be mha
  CHECK(chosen_gqa_kv_heads(71) == 0);  // prime: only 1 and 71
  CHECK(chosen_gqa_kv_heads(2) == 0);
  CHECK(chosen_gqa_kv_heads(1) == 0);

  const auto gemma = variant_forms(preset("gemma-3-27b"));
  CHECK(gemma[0].shape->kv_heads == 32);
  CHECK(gemma[1].shape->kv_heads == 16);
  CHECK(gemma[1].model_own);
  CHECK(gemma[2].shape->kv_heads == 1);
  CHECK(gemma[3].shape->latent_dim == 512);  // 4 x 128
  CHECK(gemma[3].shape->rope_dim == 64);     // 128 / 2
  CHECK_FALSE(gemma[3].model_own);
  for (const VariantForm& f : gemma) {
    CHECK(f.shape->window == 1024);  // everything but the attention is kept
    CHECK_NOTHROW(validate_shape(*f.shape, {}));
  }
  const auto falcon = variant_forms(preset("falcon-7b"));
  CHECK_FALSE(falcon[1].shape.has_value());
  CHECK(falcon[2].model_own);
  const auto v3 = variant_forms(preset("deepseek-v3"));
  CHECK(v3[3].model_own);
  CHECK(*v3[3].shape == preset("deepseek-v3"));
  CHECK(v3[1].shape->kv_heads == 8);
  for (int i = 0; i < 3; ++i) CHECK(v3[static_cast<std::size_t>(i)].shape->rope_dim == 64);  // keys 128 + 64
}
