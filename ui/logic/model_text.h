#pragma once
// What the Model view says, without a window: the model in one line, the parts of each layer in the order the
// residual stream passes them (named as Figures 5-7 of arXiv 2604.00965 name them for pre, post and no LayerNorm), a head's
// hovered weight and the most likely next tokens.
#include <string>
#include <vector>

#include "core/model.h"

namespace attn::ui {

// "2 layers · d_model 8 · Pre-LN · GELU feed-forward (d_ff 32) · learned positions · 2,080 parameters", with the
// model's parameter_count (counted once per edit: counting copies the model).
std::string model_summary(const Model& m, std::int64_t parameters);

// One box of the layer column: what flows out of a part of the model for the tokens.
struct StreamPart {
  std::string title;             // "LN1(x)", "x + Attn(LN1(x))", ...
  const Matrix* values;          // (N, d_model) in the trace
  bool attention;                // the attention's output: opens the layer in the pipeline
  std::string short_title = {};  // written instead of a title wider than its box, rather than cutting the formula
};

// A layer's parts as two rows (the attention sublayer, then the FFN sublayer if the model has one), in the order
// the stream passes them: pre  LN1(x) | Attn(LN1(x)) | x + Attn(LN1(x)), then LN2(x) | FFN(LN2(x)) | x + FFN(...);
// post  Attn(x) | LN1(x + Attn(x)); none  Attn(x) | x + Attn(x).
std::vector<std::vector<StreamPart>> layer_parts(const Model& m, const LayerTrace& t);

// "layer 1, head 0: "c" (query 3) looks at "a" (key 1) with weight 0.412345678901"
std::string head_weight_text(int layer, int head, const std::vector<std::string>& tokens, int row, int col,
                             double weight);

// The k most likely next tokens after position `row`, most likely first (ties by vocabulary order).
struct Prediction {
  std::string token;
  double probability;
};
std::vector<Prediction> top_predictions(const ModelTrace& t, const std::vector<std::string>& vocab, int row, int k);

}  // namespace attn::ui
