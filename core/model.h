#pragma once
// A small transformer around the engine's attention (000, section 3): token embeddings and positions, then
// N_L layers of attention and a feed-forward sublayer joined by the residual stream and LayerNorm (pre, post
// or none), then the unembedding to logits over the vocabulary. Each layer's attention IS a scenario: its
// embeddings are the (normalised) residual stream entering it, so the pipeline explains it step by step.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/attention.h"
#include "core/config.h"
#include "core/head_roles.h"
#include "core/matrix.h"
#include "core/scenario.h"
#include "core/weights.h"

namespace attn {

enum class Norm {
  None,  // x = x + Attn(x); x = x + FFN(x)
  Pre,   // x = x + Attn(LN1(x)); x = x + FFN(LN2(x)); LN_final after the last layer
  Post,  // x = LN1(x + Attn(x)); x = LN2(x + FFN(x))
};

// What each norm computes, per row of x.
enum class NormFunction {
  LayerNorm,  // gain * (x - mean) / sqrt(var + eps) + bias, the biased variance (GPT-2)
  RmsNorm,    // gain * x / sqrt(mean(x^2) + eps), no bias (Llama, Qwen2, Mistral)
};

enum class FfnKind {
  None,      // no feed-forward sublayer: an attention-only model
  Relu,      // relu(x W_1 + b_1) W_2 + b_2
  Gelu,      // gelu(x W_1 + b_1) W_2 + b_2, the exact gelu with erf
  Swiglu,    // (silu(x W_1) * (x W_3)) W_2
  GeluTanh,  // gelu_tanh(x W_1 + b_1) W_2 + b_2, GPT-2's tanh approximation of gelu
};

std::optional<Norm> parse_norm(std::string_view s);
std::optional<FfnKind> parse_ffn_kind(std::string_view s);
std::optional<NormFunction> parse_norm_function(std::string_view s);
std::string_view to_string(Norm n);
std::string_view to_string(FfnKind k);
std::string_view to_string(NormFunction f);
std::string_view norm_names();           // "none | pre | post"
std::string_view ffn_kind_names();       // "none | relu | gelu | swiglu | gelu_tanh"
std::string_view norm_function_names();  // "layer_norm | rms_norm"
// Whether the FFN kind adds b_1 and b_2 (relu, gelu, gelu_tanh).
bool ffn_has_biases(FfnKind k);

struct FfnConfig {
  FfnKind kind = FfnKind::None;
  int d_ff = 0;  // the hidden width; 0 with kind none
};

// A layer's weights besides its attention's, as the file gives them (any may be missing).
struct LayerWeights {
  SharedMatrix ln1_gain, ln1_bias;  // (1, d_model) norm pre or post
  SharedMatrix ln2_gain, ln2_bias;  // (1, d_model) norm pre or post, with an FFN
  SharedMatrix W_1;                 // (d_model, d_ff)
  SharedMatrix b_1;                 // (1, d_ff)      relu and gelu
  SharedMatrix W_2;                 // (d_ff, d_model)
  SharedMatrix b_2;                 // (1, d_model)   relu and gelu
  SharedMatrix W_3;                 // (d_model, d_ff) swiglu: the gate's other half
};

// Each LayerWeights field's name in files, and whether the file writes it as one flat row.
struct LayerWeightField {
  const char* name;
  SharedMatrix LayerWeights::*slot;
  bool row;
};
inline constexpr LayerWeightField kLayerWeightFields[] = {
    {"ln1_gain", &LayerWeights::ln1_gain, true}, {"ln1_bias", &LayerWeights::ln1_bias, true},
    {"ln2_gain", &LayerWeights::ln2_gain, true}, {"ln2_bias", &LayerWeights::ln2_bias, true},
    {"W_1", &LayerWeights::W_1, false},          {"b_1", &LayerWeights::b_1, true},
    {"W_2", &LayerWeights::W_2, false},          {"b_2", &LayerWeights::b_2, true},
    {"W_3", &LayerWeights::W_3, false}};

struct ModelLayer {
  AttentionConfig attention;  // its positions are the model's (rope acts here; absolute ones were added before)
  Weights weights;            // the attention's (W_O always)
  LayerWeights own;
};

struct Model {
  std::string name, description;
  std::vector<std::string> vocab;  // a token is its index here
  int d_model = 1;
  int max_positions = 1;  // the longest input
  Positions positions = Positions::None;
  double rope_base = 10000.0;                           // sinusoidal and rope
  RopePairing rope_pairing = RopePairing::Interleaved;  // rope
  std::optional<RopeScaling> rope_scaling;              // rope
  Norm norm = Norm::Pre;
  NormFunction norm_function = NormFunction::LayerNorm;
  double norm_eps = 1e-5;  // every norm's epsilon
  FfnConfig ffn;
  bool tied_unembedding = false;  // logits = final embedding^T: no unembedding of its own
  std::vector<ModelLayer> layers;
  SharedMatrix embedding;    // (vocab, d_model)
  SharedMatrix W_P;          // (max_positions, d_model) learned positions
  SharedMatrix final_gain;   // (1, d_model) pre only
  SharedMatrix final_bias;   // (1, d_model) pre only
  SharedMatrix unembedding;  // (d_model, vocab) untied only
  std::uint64_t seed = 1;
};

// Throws InputError naming the first field that is wrong, in the file's path syntax ("layers[1].weights.W_1",
// "layers[0].attention.heads"): sizes, limits, the vocabulary, every given weight's shape and values, and each
// layer's attention as validate checks a scenario of max_positions tokens.
void check_model(const Model& m);
// The vocabulary alone: not empty, not too long, each token a word without spaces, none twice.
void check_vocab(const std::vector<std::string>& vocab);

// After a change of the model's shape (d_model, d_ff, norm, ffn kind, positions, a layer's attention): leaves out every
// given weight the model no longer uses or whose shape no longer fits, so it is drawn from the seed. Returns one
// sentence per weight left out, naming it by its path in the file.
std::vector<std::string> drop_unfit_model_weights(Model& m);
// Grows or shrinks the stack to `count` layers (1..limits::kMaxLayers): new layers repeat the last one's
// attention configuration, with weights drawn from the seed; removed layers go from the end.
void set_layer_count(Model& m, int count);

// Where positions enter: added to the embeddings (sinusoidal, learned) or turned inside every layer (rope).
void set_model_positions(Model& m, Positions p);
// The next seed, and every weight drawn from it (the given ones are dropped).
void reseed_model(Model& m);

// The path in the file of the weight `slot` points at, one of m's ("layers[1].weights.W_1"); empty if none is.
std::string weight_field(const Model& m, const SharedMatrix* slot);

// How many numbers the model's weights hold, given or to be drawn (no weight is drawn to count them).
std::int64_t parameter_count(const Model& m);

// Every weight the model uses, each the file's where given, drawn from the seed otherwise (matrices scaled by
// 1/sqrt(their input width), so activations stay near 1), LayerNorm gains 1 and biases 0.
Model resolve_model(const Model& m);

// The indices of tokens in the vocabulary; an unknown token is refused by name (InputError, field "tokens").
std::vector<int> token_ids(const Model& m, const std::vector<std::string>& tokens);
// The same for words typed on the command line for `option` (--tokens, --model-tokens): a message names the option
// and the word by its place ("--tokens: word 2, \"zz\", is not in the model's vocabulary of 8 tokens").
std::vector<int> option_token_ids(const Model& m, const std::vector<std::string>& words, const std::string& option);
// n tokens read at once: at least `least`, at most the model's max_positions, said as such ("tokens: must be <= 512,
// the model's max_positions (found 4097)").
void check_token_count(const Model& m, std::int64_t n, const std::string& field, std::int64_t least = 1);

// Each row's softmax, shifted by the row's largest value (-inf entries get 0).
Matrix softmax_rows(const Matrix& logits);
// The loss of each next token, -log p(ids[i+1] | tokens 0..i) in nats, for i = 0..N-2, from logits (N, vocab) by
// log-sum-exp (a probability that rounds to 0 still gives its finite loss). Empty without logits for every id.
std::vector<double> next_token_losses(const Matrix& logits, const std::vector<int>& ids);
// The mean of next_token_losses: the loss a run is known by (0 for none).
double mean_loss(const std::vector<double>& losses);
// The k likeliest tokens of row i of probabilities (N, vocab), likeliest first; on a tie the lower id first.
std::vector<int> top_tokens(const Matrix& probabilities, Eigen::Index i, int k);

// LN(x) = gain * (x - mean) / sqrt(var + eps) + bias per row, var the biased variance over the row.
Matrix layer_norm(const Matrix& x, const Matrix& gain, const Matrix& bias, double eps = 1e-5);  // (N, d)
// RMS(x) = gain * x / sqrt(mean(x^2) + eps) per row.
Matrix rms_norm(const Matrix& x, const Matrix& gain, double eps);  // (N, d)
// The model's norm function on x with a norm's gain and bias (the bias absent for rms_norm).
Matrix apply_norm(const Model& m, const Matrix& x, const SharedMatrix& gain, const SharedMatrix& bias);

// What one layer did to the residual stream x (every matrix (N, d_model) unless said).
struct LayerTrace {
  Matrix residual_in;
  Trace attention;         // the layer's attention as a scenario trace: attention.x is what it read
  Matrix after_attention;  // the stream after the attention sublayer
  Matrix ffn_in;           // what the FFN read (empty without an FFN)
  Matrix ffn_hidden;       // (N, d_ff) the activation before W_2 (empty without an FFN)
  Matrix ffn_out;          // the FFN's output (empty without an FFN)
  Matrix residual_out;
  // Whether the attention's whole trace is kept (ModelRunOptions::kept): every head's weights, and ffn_hidden. A
  // layer not kept holds only what the stream needs: attention.x and attention.output (heads empty, ffn_hidden too).
  bool kept = true;
  // ModelRunOptions::overview > 0: each head's weights (and the mask) as block means of at most overview x overview
  // cells, for a layer kept or not (exactly the weights when the tokens are that few).
  std::vector<Matrix> weights_overview;
  Matrix mask_overview;  // the share of each block's cells the mask shows (1 where every cell is visible)
  std::vector<TextHeadScores> head_scores;  // ModelRunOptions::head_scores: each head's on the run's token ids
};

struct ModelTrace {
  std::vector<std::string> tokens;
  std::vector<int> ids;
  Matrix embedded;  // (N, d_model) embedding rows plus absolute positions
  std::vector<LayerTrace> layers;
  Matrix final;          // (N, d_model) what the unembedding reads: LN_final(x) pre, x otherwise
  Matrix logits;         // (N, vocab)
  Matrix probabilities;  // (N, vocab) softmax over the vocabulary
};

// The layer's attention as a scenario reading x (the stream entering it, normalised for pre): m resolved.
Scenario layer_scenario(const Model& m, int layer, const std::vector<std::string>& tokens, const Matrix& x);
// The same for a trace of m that ran layer `layer`: its tokens, and what that layer's attention read.
Scenario layer_scenario(const Model& m, int layer, const ModelTrace& t);

// Where a forward pass finds its weights, a part at a time: a resolved model's own matrices, or a checkpoint's
// (core/io/checkpoint_model.h), converted from the file when asked and let go when the part is done.
class ModelWeights {
 public:
  virtual ~ModelWeights() = default;
  virtual ModelLayer layer(int l) const = 0;                             // every weight the layer uses
  virtual Matrix embedding_rows(const std::vector<int>& ids) const = 0;  // (N, d_model)
  virtual Matrix learned_positions(int n) const = 0;                     // (n, d_model) learned positions only
  virtual SharedMatrix final_gain() const = 0;                           // (1, d_model) pre only
  virtual SharedMatrix final_bias() const = 0;                           // (1, d_model) pre layer_norm only
  virtual Matrix logits(const Matrix& final) const = 0;                  // (N, vocab) final times the unembedding
};

// A resolved model's own matrices (m must outlive it).
class ResolvedWeights final : public ModelWeights {
 public:
  explicit ResolvedWeights(const Model& m) : m_(m) {}
  ModelLayer layer(int l) const override;
  Matrix embedding_rows(const std::vector<int>& ids) const override;
  Matrix learned_positions(int n) const override;
  SharedMatrix final_gain() const override { return m_.final_gain; }
  SharedMatrix final_bias() const override { return m_.final_bias; }
  Matrix logits(const Matrix& final) const override;

 private:
  const Model& m_;
};

// The layer's attention as a scenario reading x, for a layer given apart from m (a checkpoint's, read when needed).
Scenario layer_scenario(const Model& m, const ModelLayer& layer, int l, const std::vector<std::string>& tokens,
                        const Matrix& x);

// A list of heads as typed (ablation.h's parse_ablation), checked against m's layers and each layer's query heads.
Ablation parse_ablation(std::string_view list, const Model& m, const std::string& field);

// What a forward pass keeps. A deep model costs what its kept layers cost plus its stream: a layer not kept is
// computed, its stream kept, its attention's trace dropped before the next layer runs.
struct ModelRunOptions {
  int layers = -1;                         // >= 0 and fewer than the model has: only those layers run (no logits)
  std::optional<std::vector<int>> kept{};  // the layers whose whole attention trace is kept; every layer's if not given
  int overview = 0;                        // > 0: every layer's weights_overview and mask_overview, at most this a side
  bool head_scores = false;                // every layer's head_scores (causal attention over the run's tokens)
  Ablation ablation{};                     // heads knocked out (ablation.h), in the layers they name
  std::function<void(int layer)> on_layer{};  // told as each layer is done (a window's progress bar)
  bool logits = true;  // false: the pass stops at `final` (a caller that reads the unembedding a block at a time)
  bool keeps(int layer) const;
};

// The whole forward pass. m resolved (resolve_model); tokens from its vocabulary, at most max_positions. With
// layers >= 0 and fewer than the model has, only those layers run (no logits): what layer `layers` reads is then
// the last one's residual_out.
ModelTrace run_model(const Model& m, const std::vector<std::string>& tokens, int layers = -1);
ModelTrace run_model(const Model& m, const std::vector<std::string>& tokens, const ModelRunOptions& options);
// The same on token ids already checked (each below the vocabulary's size, at most max_positions of them), the
// weights read from w; m gives the configuration (its weights may be absent). `tokens` label the trace.
ModelTrace run_model(const Model& m, const std::vector<std::string>& tokens, const std::vector<int>& ids,
                     const ModelWeights& w, const ModelRunOptions& options);

}  // namespace attn
