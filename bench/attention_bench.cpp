// Timings of the engine, for bench/compare.py and docs/PERFORMANCE.md.
//   BM_CatSat                 compute_trace of the worked example (assets/scenarios/the_cat_sat.json)
//   BM_Trace/T                the full trace, every intermediate kept: d_model 512, 8 heads of 64, causal, W_O
//   BM_DecodeStep/T           one new token with T-1 tokens cached: project it, append it, attend over T keys
//   BM_RecomputeForStep/T     what the step saves: the full causal trace of all T tokens
//   BM_TraceDrag/T/i          the window's recompute after a drag on token i's embedding, with the trace before it
//   BM_TrainStep              one training step of the induction model (2 layers of 4 heads, d_model 64, learned
//                             positions, Pre-LN, attention only, vocabulary 64) on a batch of 32 induction sequences of
//                             32: the batch drawn, forward, backward, AdamW
//   BM_ModelRun/N             run_model of a 4-layer model (d_model 256, 8 causal heads of 32, Pre-LN, learned
//                             positions, GELU FFN of 1024, vocabulary 64) on N tokens, every layer's trace kept
// Inputs and weights are filled before the timed loop (seeded values, scaled so the scores are O(1)); every
// benchmark reports real (wall-clock) time, since the heads run on OpenMP threads.
#include <malloc.h>

#include <benchmark/benchmark.h>

#include <cmath>
#include <functional>
#include <string>

#include "core/attention.h"
#include "core/decode.h"
#include "core/init.h"
#include "core/io/scenario_json.h"
#include "core/model.h"
#include "core/trace_bytes.h"
#include "core/training.h"

namespace {

using namespace attn;

constexpr int kModelDim = 512;
constexpr int kHeads = 8;
constexpr int kHeadDim = 64;

// T tokens of d_model 512, 8 causal heads of 64 with W_O; every weight given, so nothing is seeded in the loop.
Scenario sized_scenario(int tokens) {
  Scenario s;
  s.name = "bench T=" + std::to_string(tokens);
  for (int i = 0; i < tokens; ++i) s.input.tokens.push_back("t" + std::to_string(i));
  s.input.embeddings = seeded_matrix(1, SeedStream::Embeddings, tokens, kModelDim);
  s.attention.variant = Variant::Mha;
  s.attention.heads = kHeads;
  s.attention.kv_heads = kHeads;
  s.attention.head_dim = kHeadDim;
  s.attention.mask = MaskKind::Causal;
  s.attention.output_projection = true;
  // Entries of about 1/sqrt(d_model): q.k/sqrt(d) stays O(1), as in a trained model, and the softmax does not saturate.
  const double w = 1.0 / std::sqrt(double(kModelDim));
  s.weights.W_Q = seeded_matrix(1, SeedStream::W_Q, kModelDim, kHeads * kHeadDim) * w;
  s.weights.W_K = seeded_matrix(1, SeedStream::W_K, kModelDim, kHeads * kHeadDim) * w;
  s.weights.W_V = seeded_matrix(1, SeedStream::W_V, kModelDim, kHeads * kHeadDim) * w;
  s.weights.W_O = seeded_matrix(1, SeedStream::W_O, kHeads * kHeadDim, kModelDim) * w;
  return s;
}

void BM_CatSat(benchmark::State& state) {
  const Scenario s = load_scenario_file(std::string(ATTN_ASSETS_DIR) + "/scenarios/the_cat_sat.json");
  std::int64_t bytes = 0;
  for (auto _ : state) {
    Trace t = compute_trace(s);
    benchmark::DoNotOptimize(t.output.data());
    bytes = trace_bytes(t);
  }
  state.counters["trace_bytes"] =
      benchmark::Counter(double(bytes), benchmark::Counter::kDefaults, benchmark::Counter::kIs1024);
}
BENCHMARK(BM_CatSat)->UseRealTime()->Unit(benchmark::kMicrosecond);

void full_trace(benchmark::State& state, const std::function<void(Scenario&)>& change = nullptr) {
  const int tokens = static_cast<int>(state.range(0));
  Scenario s = sized_scenario(tokens);
  if (change) change(s);
  std::int64_t bytes = 0;
  for (auto _ : state) {
    Trace t = compute_trace(s);
    benchmark::DoNotOptimize(t.output.data());
    bytes = trace_bytes(t);  // negligible next to the trace: a sum over ~130 sizes
  }
  state.counters["trace_bytes"] =
      benchmark::Counter(double(bytes), benchmark::Counter::kDefaults, benchmark::Counter::kIs1024);
  state.counters["score_cells"] = double(kHeads) * tokens * tokens;
}

void BM_Trace(benchmark::State& state) { full_trace(state); }
BENCHMARK(BM_Trace)->Arg(128)->Arg(512)->Arg(1024)->Arg(2048)->Arg(4096)->UseRealTime()->Unit(benchmark::kMillisecond);

// The same layer with RoPE, and with DeepSeek Sparse Attention keeping 64 keys per query (an indexer of 4 heads of
// 32): what positions and the selection add to the full trace (target: at most 1.15x BM_Trace at T = 1024).
void BM_TraceRope(benchmark::State& state) {
  full_trace(state, [](Scenario& s) { s.attention.positions = Positions::Rope; });
}
BENCHMARK(BM_TraceRope)->Arg(1024)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_TraceSparse(benchmark::State& state) {
  full_trace(state, [](Scenario& s) {
    s.attention.sparse = SparseConfig{64, 4, 32};
    const double w = 1.0 / std::sqrt(double(kModelDim));
    s.weights.W_QI = seeded_matrix(1, SeedStream::W_QI, kModelDim, 4 * 32) * w;
    s.weights.W_KI = seeded_matrix(1, SeedStream::W_KI, kModelDim, 32) * w;
    s.weights.W_wI = seeded_matrix(1, SeedStream::W_wI, kModelDim, 4) * w;
  });
}
BENCHMARK(BM_TraceSparse)->Arg(1024)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_DecodeStep(benchmark::State& state) {
  const int tokens = static_cast<int>(state.range(0));
  const Scenario s = sized_scenario(tokens);
  const AttentionConfig& a = s.attention;
  const Weights w = resolve_weights(s);
  // The cache of the first T-1 tokens, as decoding them one by one would have left it, with room for one more.
  KvCache cache = make_kv_cache(a, tokens);
  const Matrix K = s.input.embeddings.topRows(tokens - 1) * *w.W_K;
  const Matrix V = s.input.embeddings.topRows(tokens - 1) * *w.W_V;
  for (std::size_t g = 0; g < cache.k.size(); ++g) {
    cache.k[g].topRows(tokens - 1) = K.middleCols(g * kHeadDim, kHeadDim);
    cache.v[g].topRows(tokens - 1) = V.middleCols(g * kHeadDim, kHeadDim);
  }
  const Matrix x_row = s.input.embeddings.bottomRows(1);
  const Matrix mask_row = decode_mask(a, tokens).bottomRows(1);
  for (auto _ : state) {
    cache.tokens = tokens - 1;  // forget the previous iteration's token: its row is overwritten
    DecodeStep step = decode_step(a, w, cache, x_row, mask_row);
    benchmark::DoNotOptimize(step.output.data());
  }
  state.counters["cache_bytes"] = benchmark::Counter(double(cache_elements_per_token(a) * tokens * 8),
                                                     benchmark::Counter::kDefaults, benchmark::Counter::kIs1024);
}
BENCHMARK(BM_DecodeStep)->Arg(128)->Arg(512)->Arg(1024)->Arg(2048)->UseRealTime()->Unit(benchmark::kMicrosecond);

// The window's worker while a drag moves a token's embedding: every head's weights kept (the heads panel shows them),
// with the trace before the edit to take unchanged tiles and row blocks from (TraceOptions::earlier). Arg 1 is the
// token dragged: 0 (every causal row sees it, the worst case) or T-1 (only the last rows do); -1 is the same trace
// without the earlier one, what every edit cost before.
void BM_TraceDrag(benchmark::State& state) {
  const int tokens = static_cast<int>(state.range(0));
  const auto token = static_cast<Eigen::Index>(state.range(1));
  const Scenario s = sized_scenario(tokens);
  const Trace before = compute_trace(s, {.keep_weights = true});
  Scenario edited = s;
  edited.input.embeddings(std::max<Eigen::Index>(token, 0), 0) += 0.1;
  for (auto _ : state) {
    Trace t = compute_trace(edited, {.keep_weights = true, .earlier = token >= 0 ? &before : nullptr});
    benchmark::DoNotOptimize(t.output.data());
  }
}
BENCHMARK(BM_TraceDrag)
    ->Args({1024, -1})
    ->Args({1024, 0})
    ->Args({1024, 1023})
    ->Args({2048, -1})
    ->Args({2048, 0})
    ->Args({2048, 2047})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// Without a cache, the new token's output needs the whole causal trace of all T tokens (its last row).
void BM_RecomputeForStep(benchmark::State& state) { full_trace(state); }
BENCHMARK(BM_RecomputeForStep)->Arg(128)->Arg(512)->Arg(1024)->Arg(2048)->UseRealTime()->Unit(benchmark::kMillisecond);

// The model compare.py times PyTorch's forward of (with weights of the same shapes).
Model bench_model(int max_positions) {
  Model m;
  m.name = "bench";
  for (int i = 0; i < 64; ++i) m.vocab.push_back("v" + std::to_string(i));
  m.d_model = 256;
  m.max_positions = max_positions;
  m.positions = Positions::Learned;
  m.norm = Norm::Pre;
  m.ffn = {FfnKind::Gelu, 1024};
  for (int l = 0; l < 4; ++l) {
    ModelLayer layer;
    layer.attention.heads = layer.attention.kv_heads = 8;
    layer.attention.head_dim = 32;
    layer.attention.mask = MaskKind::Causal;
    layer.attention.output_projection = true;
    m.layers.push_back(layer);
  }
  return resolve_model(m);
}

void BM_ModelRun(benchmark::State& state) {
  const int tokens = static_cast<int>(state.range(0));
  const Model m = bench_model(tokens);
  std::vector<std::string> input;
  for (int i = 0; i < tokens; ++i) input.push_back(m.vocab[static_cast<std::size_t>(i * 7 % 64)]);
  for (auto _ : state) {
    ModelTrace t = run_model(m, input);
    benchmark::DoNotOptimize(t.probabilities.data());
  }
}
BENCHMARK(BM_ModelRun)->Arg(512)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_TrainStep(benchmark::State& state) {
  const TrainingRun run;  // the induction task, batches of 32, AdamW lr 1e-3
  TrainState t = start_training(resolve_model(task_model(run.task, TaskModelShape{}, 1)));
  for (auto _ : state) {
    const StepResult r = training_step(t, run);
    benchmark::DoNotOptimize(r.loss);
  }
}
BENCHMARK(BM_TrainStep)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  // The app does the same, so freed trace matrices are reused instead of faulting fresh pages every recompute:
  // allocations up to 32 MiB (glibc's largest threshold) come from the heap, and the heap is not trimmed.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
