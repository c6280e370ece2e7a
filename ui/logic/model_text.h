#pragma once
// What the Model view says, without a window: the model in one line, the parts of each layer in the order the
// residual stream passes them (named as Figures 5-7 of arXiv 2604.00965 name them for pre, post and no LayerNorm), a
// head's hovered weight and the most likely next tokens.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/model.h"

namespace attn::ui {

// "2 layers · d_model 8 · Pre-LN · GELU feed-forward (d_ff 32) · learned positions · 2,080 parameters", with the
// model's parameter_count (counted once per edit: counting copies the model).
std::string model_summary(const Model& m, std::int64_t parameters);

// One box of the layer column: what flows out of a part of the model for the tokens.
// What the model's norms are called in formulas: "LN" (LayerNorm) or "RMS" (RMSNorm).
std::string norm_symbol(const Model& m);

struct StreamPart {
  std::string title;             // "LN1(x)", "x + Attn(LN1(x))", ...
  const Matrix* values;          // (N, d_model) in the trace
  bool attention;                // the attention's output (its layer opens in the pipeline)
  std::string short_title = {};  // written instead of a title wider than its box, rather than cutting the formula
  // The columns' names: the vocabulary over the logits, so they match the next-token bars; nullptr numbers them.
  const std::vector<std::string>* column_names = nullptr;
};

// A layer's parts as two rows (the attention sublayer, then the FFN sublayer if the model has one), in the order
// the stream passes them: pre  LN1(x) | Attn(LN1(x)) | x + Attn(LN1(x)), then LN2(x) | FFN(LN2(x)) | x + FFN(...);
// post  Attn(x) | LN1(x + Attn(x)); none  Attn(x) | x + Attn(x).
std::vector<std::vector<StreamPart>> layer_parts(const Model& m, const LayerTrace& t);

// A part of the Model view's column: the input box, a layer's boxes (a sublayer's row, its addition included, or both
// rows) or the output boxes. A lesson page names the parts it is about ("model_outline"); the view outlines them.
struct ModelPart {
  enum class Place { Input, Layer, Output };
  Place place = Place::Input;
  int layer = 0;      // Place::Layer
  int sublayer = -1;  // Place::Layer: 0 the attention's row, 1 the feed-forward's, -1 both
  bool operator==(const ModelPart&) const = default;
};
inline constexpr const char* kModelPartNames = "input, output, layer N, layer N attention or layer N ffn";
// "input", "output", "layer 1", "layer 1 attention", "layer 1 ffn"; nullopt for anything else.
std::optional<ModelPart> parse_model_part(std::string_view text);
// Whether `outline` covers a row of boxes: the input, the output, or the row `sublayer` of `layer`.
bool outlines(std::span<const ModelPart> outline, const ModelPart& row);

// How a box row's token labels fit: a line per row while the budget allows; then shorter rows with the labels in
// smaller type, down to min_line tall; a box of up to kAllLabelledRows rows grows rather than skip a label; past
// that, rows down to 3 px with every k-th labelled.
inline constexpr int kAllLabelledRows = 64;
struct RowLabelFit {
  float row_h = 0;
  float label_scale = 1;  // of the font
  int every = 1;          // every k-th row labelled
  bool operator==(const RowLabelFit&) const = default;
};
RowLabelFit fit_row_labels(int rows, float budget, float line, float min_line);
// The column labels of a box: every k-th index, k the first of 1, 2, 5, 10, 20, 50, ... whose labels (label_w wide,
// their gap included) fit in k columns of col_w.
int column_label_every(float col_w, float label_w);
// The type a box's column labels take, as a share of the body font: the largest from small up to 1 at which the
// widest label (widest_body at the body font) and the gap fit in a column of col_w.
float column_label_scale(float col_w, float widest_body, float gap, float small);

// A scrolling column's visible height: it ends at the lowest item end (breaks, in the column's content coordinates,
// measured in the frame before) within `avail` of the scroll, so no line of text is cut in half at its bottom. The
// whole `avail` when the rest is in sight, when nothing was measured, or when the best end would leave less than
// half of it (an item taller than that is cut rather than the column halved).
float fold_height(std::span<const float> breaks, float scroll, float avail);

// The heads' small multiples: each layer's heads side by side, `layers_per_row` layers to a row of thumbnails, each
// thumbnail `cell` square with `gap` between them, a row of them under a caption line (caption_h: the line and the
// row's spacing). The arrangement with the largest thumbnails within width x height; ties to fewer layers a row. Never
// smaller than kMinHeadCell (the column scrolls then) nor larger than kMaxHeadCell.
inline constexpr float kMinHeadCell = 24.0f, kMaxHeadCell = 240.0f;
struct HeadGridFit {
  int layers_per_row = 1;
  float cell = kMinHeadCell;
  bool operator==(const HeadGridFit&) const = default;
};
HeadGridFit fit_head_grid(int layers, int heads, float width, float height, float caption_h, float gap);

// "layer 1, head 0: "c" (query 3) looks at "a" (key 1) with weight 0.412345678901"
std::string head_weight_text(int layer, int head, const std::vector<std::string>& tokens, int row, int col,
                             double weight);
// A cell of a head's weights drawn as an overview (ModelRunOptions::overview, block means of at most a side of cells):
// head_weight_text when the overview is the weights themselves, else the queries and keys its block covers,
// "layer 1, head 0: queries 64–127 look at keys 0–63 with mean weight 0.012".
std::string head_cell_text(int layer, int head, const std::vector<std::string>& tokens, const Matrix& overview, int row,
                           int col);

// Which key/value head query head h reads and which heads share it, "reads key/value head 1 with heads 3–5"; empty
// where every query head has its own (MHA, and MLA, which expands one per head).
std::string kv_group_text(const AttentionConfig& a, int h);

// The k most likely next tokens after position `row`, most likely first (ties by vocabulary order).
struct Prediction {
  std::string token;
  double probability;
};
std::vector<Prediction> top_predictions(const ModelTrace& t, const std::vector<std::string>& vocab, int row, int k);

}  // namespace attn::ui
