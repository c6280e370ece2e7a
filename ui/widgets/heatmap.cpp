#include "ui/widgets/heatmap.h"

#include <GL/gl.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <unordered_map>

#include "core/text_format.h"
#include "ui/logic/cell_format.h"
#include "ui/logic/focus.h"
#include "ui/logic/glyph_set.h"
#include "ui/logic/hover_text.h"
#include "ui/widgets/heatmap_layout.h"
#include "ui/widgets/heatmap_pixels.h"
#include "ui/widgets/layout_check_frame.h"
#include "ui/widgets/picture_export.h"
#include "ui/widgets/style.h"
#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"

namespace attn::ui {
namespace {

// Between a cell's edge and its number written in `font`: 3 px at the body size, a little more for the larger
// presentation font, whose digits edge to edge across neighbouring cells read as one number (more would cost
// lesson 6 page 1's k_0 its font: X, W_K and k_0 beside the Heads panel have no pixel to spare).
float cell_pad(const ImFont* font) { return font_size(font) > font_size(ImGui::GetIO().Fonts->Fonts[0]) ? 3.5f : 3.0f; }

struct CachedTexture {
  GLuint id = 0;
  std::uint64_t hash = 0;
  // What was drawn, when the caller vouched for it with a version: the same again needs no hash.
  std::uint64_t version = 0;
  const double* data = nullptr;
  const Matrix* visible = nullptr;
  Eigen::Index rows = 0, cols = 0;
  int tex_rows = 0, tex_cols = 0;
  ValueRange range{};
  ColourMap map{};
  bool same(std::uint64_t v, const Matrix& m, const Matrix* vis, ValueRange r, ColourMap cm, int tr, int tc) const {
    return v != 0 && v == version && m.data() == data && vis == visible && m.rows() == rows && m.cols() == cols &&
           r.lo == range.lo && r.hi == range.hi && cm == map && tr == tex_rows && tc == tex_cols;
  }
};

std::vector<std::uint64_t>& versions() {
  static std::vector<std::uint64_t> stack;
  return stack;
}
std::uint64_t current_version() { return versions().empty() ? 0 : versions().back(); }

std::vector<const KnownRanges*>& known_ranges() {
  static std::vector<const KnownRanges*> stack;
  return stack;
}

// auto_range of a large matrix: computed ahead, or remembered while the version says it has not changed.
ValueRange remembered_range(const Matrix& m, ColourMap map, const Matrix* visible) {
  if (!known_ranges().empty() && known_ranges().back())
    if (const ValueRange* known = find_range(*known_ranges().back(), m, map, visible)) return *known;
  struct Entry {
    std::uint64_t version;
    const Matrix* visible;
    Eigen::Index rows, cols;
    ColourMap map;
    ValueRange range;
  };
  static std::unordered_map<const double*, Entry> cache;
  const std::uint64_t v = current_version();
  if (v == 0 || m.size() < 4096) return auto_range(m, map, visible);
  if (cache.size() > 256) cache.clear();
  auto it = cache.find(m.data());
  if (it != cache.end() && it->second.version == v && it->second.visible == visible && it->second.rows == m.rows() &&
      it->second.cols == m.cols() && it->second.map == map)
    return it->second.range;
  const ValueRange r = auto_range(m, map, visible);
  cache[m.data()] = {v, visible, m.rows(), m.cols(), map, r};
  return r;
}

// One texture per large heatmap, re-uploaded only when what it shows changes.
std::unordered_map<ImGuiID, CachedTexture>& textures() {
  static std::unordered_map<ImGuiID, CachedTexture> cache;
  return cache;
}

// Each texture's pixels version (TexturePixelsVersion), from one counter: a GL name deleted and made again never
// repeats a version.
std::unordered_map<GLuint, std::uint64_t>& pixels_versions() {
  static std::unordered_map<GLuint, std::uint64_t> versions;
  return versions;
}

// `pixels`: the size it is drawn at, which the texture matches texel for pixel (up to texture_extent's limit).
ImTextureID texture_for(ImGuiID id, const Matrix& m, ColourMap map, ValueRange range, const Matrix* visible,
                        ImVec2 pixels) {
  CachedTexture& t = textures()[id];
  const std::uint64_t version = current_version();
  // A heatmap of 4096 queries by 2 keys can be drawn 160,000 pixels tall in a scrolling panel.
  static const int gl_limit = [] {
    GLint v = 0;
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &v);
    return static_cast<int>(v);
  }();
  const int tex_rows = texture_extent(pixels.y, gl_limit);
  const int tex_cols = texture_extent(pixels.x, gl_limit);
  if (t.id != 0 && t.same(version, m, visible, range, map, tex_rows, tex_cols))
    return reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(t.id));
  // With a version the content is known to be new; without one, hashing it may spare the upload.
  const std::uint64_t hash = version != 0 || tex_rows != t.tex_rows || tex_cols != t.tex_cols
                                 ? t.hash + 1
                                 : content_hash(m, visible, range, map);
  t.version = version;
  t.data = m.data();
  t.visible = visible;
  t.rows = m.rows();
  t.cols = m.cols();
  t.range = range;
  t.map = map;
  t.tex_rows = tex_rows;
  t.tex_cols = tex_cols;
  if (t.id == 0) {
    glGenTextures(1, &t.id);
    t.hash = hash + 1;
  }
  if (t.hash != hash) {
    const std::vector<std::uint32_t> texels = heatmap_pixels(m, map, range, visible, tex_rows, tex_cols);
    glBindTexture(GL_TEXTURE_2D, t.id);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, tex_cols, tex_rows, 0, GL_RGBA, GL_UNSIGNED_BYTE, texels.data());
    static std::uint64_t uploads = 0;
    pixels_versions()[t.id] = ++uploads;
    t.hash = hash;
  }
  return reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(t.id));
}

}  // namespace

std::string HeatmapLabel(const std::vector<std::string>* labels, Eigen::Index i) {
  if (!labels || i >= static_cast<Eigen::Index>(labels->size())) return std::to_string(i);
  // Beside every matrix alike, so not a finding of the layout check: the explanation names the token in full.
  return FitText(shorten_label((*labels)[static_cast<std::size_t>(i)]), kMaxLabelEms * ImGui::GetFontSize(), false);
}

namespace {

// Diagonal strokes clipped to the cell: the mark of "hidden", readable without colour.
void hatch(ImDrawList* dl, ImVec2 a, ImVec2 b) {
  const float step = std::max(static_cast<float>(kHatchPeriod), (b.x - a.x) / 5.0f);
  dl->PushClipRect(a, b, true);
  for (float x = a.x - (b.y - a.y); x < b.x; x += step)
    dl->AddLine({x, b.y}, {x + (b.y - a.y), a.y}, pack(kHatchLine), 1.0f);
  dl->PopClipRect();
}

// The cells' numbers are written in their own font, larger in presentation mode (cell_font): measured in it too.
struct InCellFont {
  explicit InCellFont(ImFont* font = cell_font()) { ImGui::PushFont(font); }
  ~InCellFont() { ImGui::PopFont(); }
  InCellFont(const InCellFont&) = delete;
  InCellFont& operator=(const InCellFont&) = delete;
};

// The widest visible value at `decimals`.
float widest_value(const Matrix& m, const Matrix* visible, int decimals, ImFont* font = cell_font()) {
  const InCellFont numbers(font);
  float w = 0;
  for (Eigen::Index i = 0; i < m.size(); ++i)
    if (!visible || visible->data()[i] != 0.0)
      w = std::max(w, ImGui::CalcTextSize(format_fixed(m.data()[i], decimals).c_str()).x);
  return w;
}

// The most decimals, up to the matrix's own, with which every visible value fits `room`.
int shared_decimals(const Matrix& m, const Matrix* visible, float room, int wanted, ImFont* font) {
  for (int d = wanted; d > 1; --d)
    if (widest_value(m, visible, d, font) <= room) return d;
  return std::min(wanted, 1);
}

// The matrix's shared number of decimals, so a column reads evenly and agrees with the explanations (a weight of
// 0.00004 reads 0.000, as they round it; only an exact 0 reads 0); a value that does not fit gets its own
// shorter form; "" when not even that fits `room`.
std::string cell_text(double x, int decimals, int max_chars, float room, ImFont* font) {
  const InCellFont numbers(font);
  std::string text = format_fixed(x, decimals);
  for (int n = max_chars; n >= 1 && ImGui::CalcTextSize(text.c_str()).x > room; --n) text = format_cell(x, n);
  return ImGui::CalcTextSize(text.c_str()).x <= room ? text : std::string();
}

// The range's ends as the cells write them (a range taken from the data ends at a cell: -1.920, not -1.92);
// whole ends (weights: 0 to 1) as they are.
struct LegendEnds {
  std::string lo, hi;
};
LegendEnds legend_ends(ValueRange range, std::optional<int> decimals) {
  const auto end = [&](double x) {
    return !decimals || x == std::round(x) ? short_number(x) : format_fixed(x, *decimals);
  };
  return {end(range.lo), end(range.hi)};
}

// Wide enough for both ends of the range and a gap, however narrow the grid.
float legend_min_width(const LegendEnds& ends) {
  return ImGui::CalcTextSize(ends.lo.c_str()).x + ImGui::CalcTextSize(ends.hi.c_str()).x + 24;
}

void draw_colour_legend(ImDrawList* dl, ImVec2 at, float width, ColourMap map, ValueRange range,
                        const LegendEnds& ends) {
  const float bar_h = GetStyle().legend_bar_height;
  const int segments = 32;
  for (int i = 0; i < segments; ++i) {
    const float x0 = at.x + width * static_cast<float>(i) / segments;
    const float x1 = at.x + width * static_cast<float>(i + 1) / segments;
    dl->AddRectFilled({x0, at.y + 3}, {x1 + 0.5f, at.y + 3 + bar_h}, pack(sample(map, (i + 0.5) / segments)));
  }
  const std::string& lo = ends.lo;
  const std::string& hi = ends.hi;
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const float y = at.y + 4 + bar_h;
  dl->AddText({at.x, y}, text, lo.c_str());
  dl->AddText({at.x + width - ImGui::CalcTextSize(hi.c_str()).x, y}, text, hi.c_str());
  if (map == ColourMap::Diverging && range.lo < 0 && range.hi > 0) {
    const float zx = at.x + width * static_cast<float>(normalise(0.0, range)) - ImGui::CalcTextSize("0").x / 2;
    if (zx > at.x + ImGui::CalcTextSize(lo.c_str()).x + 6 && zx < at.x + width - ImGui::CalcTextSize(hi.c_str()).x - 12)
      dl->AddText({zx, y}, text, "0");
  }
}

// What the layout is computed from: the matrix's size, its labels' and numbers' widths, the room given.
struct Measured {
  HeatmapLayoutInput in;
  bool want_values = false;  // the matrix is small enough for numbers and the caller wants them
  int wanted_decimals = 0;   // the matrix's own format (matrix_decimals)
  float widest_label = 0;    // of the column labels
};

Measured measure(const Matrix& m, const HeatmapOptions& opts, bool labels, bool legend) {
  Measured r;
  HeatmapLayoutInput& in = r.in;
  in.row_labels = !(opts.flags & HeatmapFlags_NoRowLabels);
  if (labels && in.row_labels)
    for (Eigen::Index row = 0; row < m.rows(); ++row)
      in.row_label_w = std::max(in.row_label_w, ImGui::CalcTextSize(HeatmapLabel(opts.row_labels, row).c_str()).x);
  in.rows = static_cast<int>(m.rows());
  in.cols = static_cast<int>(m.cols());
  in.avail_w = opts.size.x > 0 ? opts.size.x : ImGui::GetContentRegionAvail().x;
  in.avail_h = opts.size.y;
  in.line_h = ImGui::GetTextLineHeight();
  in.labels = labels;
  in.header = !(opts.flags & HeatmapFlags_NoColumnLabels);
  in.legend = legend;
  in.fill = (opts.flags & HeatmapFlags_Fill) != 0;
  in.texture = (opts.flags & HeatmapFlags_Texture) != 0;
  in.min_w = opts.min_width;
  in.stretch_tall = (opts.flags & HeatmapFlags_StretchTall) != 0;
  in.max_cell = opts.max_cell * ImGui::GetFontSize() / kBodyPixels;  // cells grow with the zoom, like the text
  r.want_values = !(opts.flags & HeatmapFlags_NoValues) && HeatmapShowsNumbers(m);
  r.wanted_decimals = r.want_values ? matrix_decimals(m, opts.visible) : 0;
  if (r.want_values) in.value_w = HeatmapValueWidth(m, opts.visible);
  // Column labels are written whole over their column: a cell is widened for its label as for its number.
  if (labels && in.header)
    for (Eigen::Index c = 0; c < m.cols(); ++c)
      r.widest_label = std::max(r.widest_label, ImGui::CalcTextSize(HeatmapLabel(opts.col_labels, c).c_str()).x);
  if (labels && in.header && m.cols() <= 64) in.value_w = std::max(in.value_w, r.widest_label + kLabelGap);
  return r;
}

// Where the cells are on screen.
struct Grid {
  ImVec2 origin, at, end;  // the widget's top-left corner; the first cell's; past the last cell's
  float cw = 0, ch = 0;
  ImVec2 cell(Eigen::Index r, Eigen::Index c) const {
    return {at.x + cw * static_cast<float>(c), at.y + ch * static_cast<float>(r)};
  }
};

void hover(const Grid& g, const Measured& me, const HeatmapOptions& opts, HeatmapResult& result) {
  if (!ImGui::IsItemHovered()) return;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (mouse.x < g.at.x || mouse.x >= g.end.x || mouse.y < g.at.y || mouse.y >= g.end.y) return;
  result.hovered_col = std::clamp(static_cast<int>((mouse.x - g.at.x) / g.cw), 0, me.in.cols - 1);
  result.hovered_row = std::clamp(static_cast<int>((mouse.y - g.at.y) / g.ch), 0, me.in.rows - 1);
  result.clicked = (opts.flags & HeatmapFlags_Clickable) && ImGui::IsItemClicked(ImGuiMouseButton_Left);
}

// How the layout check names a heatmap in what it reports: "scores 3x3: ".
std::string check_name(const char* id, const Matrix& m) {
  return std::string(id) + " " + std::to_string(m.rows()) + "\u00D7" + std::to_string(m.cols()) + ": ";
}

// A focused heatmap's slots: whether drawn row or column i is an elided run, the original index it stands for, and
// where an original index is drawn (-1: elided).
bool elided(std::span<const int> slots, Eigen::Index i) {
  return !slots.empty() && slots[static_cast<std::size_t>(i)] == kElided;
}
int original(std::span<const int> slots, int i) {
  return slots.empty() || i < 0 ? i : slots[static_cast<std::size_t>(i)];
}
int drawn(std::span<const int> slots, int i) { return slots.empty() ? i : focused_index(slots, i); }

// An elided cell: no colour and no number, the ellipsis of its run ("⋮" down an elided row, "⋯" along a column).
void draw_elided(ImDrawList* dl, ImVec2 a, float cw, float ch, bool row) {
  const char* mark = row ? "\u22EE" : "\u22EF";
  const ImVec2 ts = ImGui::CalcTextSize(mark);
  dl->AddText({a.x + (cw - ts.x) / 2, a.y + (ch - ts.y) / 2}, ImGui::GetColorU32(ImGuiCol_Text), mark);
}

struct NumbersFont {
  ImFont* font;
  float size;  // as drawn
};
// The cells' own font (cell_font: digits 16 px tall in presentation mode), or the body font where that one would
// cost the matrix decimals or its numbers (a wide equation beside a lesson); the check reports the smaller digits.
NumbersFont numbers_font(const Matrix& m, const Matrix* visible, float cw, float ch, int wanted) {
  const auto fits = [&](ImFont* f) {
    return ch >= font_size(f) && cw >= font_size(f) &&
           shared_decimals(m, visible, cw - 2 * cell_pad(f), wanted, f) == wanted;
  };
  ImFont* body = ImGui::GetIO().Fonts->Fonts[0];
  ImFont* font = cell_font() != body && !fits(cell_font()) && fits(body) ? body : cell_font();
  return {font, font_size(font)};
}

// Each cell a filled rectangle with its number (or a mark that says "point here" when it does not fit), and
// thin separators that keep neighbouring equal values apart.
void draw_cells(const char* id, const Matrix& m, const HeatmapOptions& opts, const Grid& g, const Measured& me,
                ValueRange range) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float cw = g.cw, ch = g.ch;
  const NumbersFont f = numbers_font(m, opts.visible, cw, ch, me.wanted_decimals);
  const float room = cw - 2 * cell_pad(f.font);
  if (LayoutCheckOn() && me.want_values && f.font != cell_font())
    ReportHere(check_name(id, m) + "numbers in the body font, digits " + short_number(kDigitShare * f.size) +
               " px tall (under 16): " + short_number(cw) + "\u00D7" + short_number(ch) + " px cells");
  const bool values = me.want_values && ch >= f.size && cw >= f.size;
  // Characters are not all as wide as "0": start from what could fit and shorten until it does.
  const float dot = f.font->CalcTextSizeA(f.size, FLT_MAX, 0.0f, ".").x;
  const int max_chars = std::min(8, static_cast<int>(room / std::max(1.0f, dot)));
  const int decimals = values ? shared_decimals(m, opts.visible, room, me.wanted_decimals, f.font) : 0;
  // Fewer decimals than the matrix has elsewhere (0.74 where the explanation says 0.738): the check says so.
  if (LayoutCheckOn() && values && decimals < me.wanted_decimals)
    ReportHere(check_name(id, m) + "numbers shown with " + std::to_string(decimals) + " decimals instead of " +
               std::to_string(me.wanted_decimals));
  int marked = 0;
  for (Eigen::Index r = 0; r < m.rows(); ++r)
    for (Eigen::Index c = 0; c < m.cols(); ++c) {
      const ImVec2 a = g.cell(r, c), b{a.x + cw, a.y + ch};
      if (elided(opts.row_slots, r) || elided(opts.col_slots, c)) {
        draw_elided(dl, a, cw, ch, elided(opts.row_slots, r));
        continue;
      }
      const double x = m(r, c);
      const bool hidden = (opts.visible && (*opts.visible)(r, c) == 0.0) || !std::isfinite(x);
      const Rgb fill = hidden ? kHiddenCell : sample(opts.map, normalise(x, range));
      dl->AddRectFilled(a, b, pack(fill));
      if (hidden) hatch(dl, a, b);
      if (!me.want_values) continue;
      const ImU32 ink = pack(hidden ? Rgb{1, 1, 1} : text_on(fill));
      const std::string text = values ? cell_text(x, decimals, max_chars, room, f.font) : std::string();
      if (text.empty()) {
        dl->AddCircleFilled({(a.x + b.x) / 2, (a.y + b.y) / 2}, std::clamp(std::min(cw, ch) * 0.12f, 1.5f, 3.5f), ink);
        ++marked;
        continue;
      }
      const ImVec2 ts = f.font->CalcTextSizeA(f.size, FLT_MAX, 0.0f, text.c_str()),
                   at{a.x + (cw - ts.x) / 2, a.y + (ch - ts.y) / 2};
      // A hidden cell's number on plain grey: the hatch's strokes through its digits made "-inf" hard to read.
      // A margin of a third of the font keeps the strokes' ends off the glyphs.
      const float margin = std::min(f.size / 3, (cw - ts.x) / 2);
      if (hidden) dl->AddRectFilled({at.x - margin, at.y}, {at.x + ts.x + margin, at.y + ts.y}, pack(kHiddenCell));
      dl->AddText(f.font, f.size, at, ink, text.c_str());
    }
  // Past 16 tokens (a real model's sentence) no screen fits a number per cell: the dots and the hover are the view.
  // Up to that, as in every lesson and the worked example, a layout that squeezes the numbers out is a finding.
  if (LayoutCheckOn() && marked > 0 && m.rows() <= 16 && m.cols() <= 16)
    ReportHere(check_name(id, m) + std::to_string(marked) + " of " + std::to_string(m.size()) +
               " cells too small for their value (" + short_number(cw) + "\u00D7" + short_number(ch) + " px)");
  const ImU32 line = ImGui::GetColorU32(ImGuiCol_WindowBg);
  if (ch >= 8)
    for (Eigen::Index r = 0; r <= m.rows(); ++r)
      dl->AddLine({g.at.x, g.cell(r, 0).y}, {g.end.x, g.cell(r, 0).y}, line, 1.0f);
  if (cw >= 8)
    for (Eigen::Index c = 0; c <= m.cols(); ++c)
      dl->AddLine({g.cell(0, c).x, g.at.y}, {g.cell(0, c).x, g.end.y}, line, 1.0f);
  dl->AddRect({g.at.x - 1, g.at.y - 1}, {g.end.x + 1, g.end.y + 1}, GetStyle().matrix_frame, 0, 0, 1.0f);
  if (LayoutCheckOn()) ReportLineContrastHere(std::string("the edge of ") + id, GetStyle().matrix_frame, line);
}

// The highlighted row and column in the accent colour; the outlined cells (a lesson's, the hovered or selected
// one) as a white frame with a dark one around it, both thick enough to see on every colour of both maps (a
// white cell's outline is the dark one).
void draw_cell_marks(const char* id, const HeatmapOptions& opts, const Grid& g, const Measured& me,
                     HeatmapResult& result) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const Style& style = GetStyle();
  const float cw = g.cw, ch = g.ch;
  if (opts.highlight_row >= 0 && opts.highlight_row < me.in.rows) {
    const float y = g.cell(opts.highlight_row, 0).y;
    dl->AddRect({g.at.x - 1, y - 1}, {g.end.x + 1, y + ch + 1}, style.accent, 0, 0, style.highlight_width);
  }
  if (opts.highlight_col >= 0 && opts.highlight_col < me.in.cols) {
    const float x = g.cell(0, opts.highlight_col).x;
    dl->AddRect({x - 1, g.at.y - 1}, {x + cw + 1, g.end.y + 1}, style.accent, 0, 0, style.highlight_width);
  }
  // The dark frames first, then the white ones: a frame's dark edge never covers the white one beside it.
  const auto frame = [&](const CellBlock& b, bool white) {
    const ImVec2 a = g.cell(b.row, b.col), z = g.cell(b.row + b.rows, b.col + b.cols);
    if (white)
      dl->AddRect({a.x - 1, a.y - 1}, {z.x + 1, z.y + 1}, IM_COL32(255, 255, 255, 255), 0, 0, style.outline_width);
    else
      dl->AddRect({a.x - 3.5f, a.y - 3.5f}, {z.x + 3.5f, z.y + 3.5f}, IM_COL32(20, 20, 20, 255), 0, 0,
                  style.outline_halo_width);
  };
  std::vector<std::pair<int, int>> cells;  // in this heatmap's drawn rows and columns
  for (const auto& [r, c] : opts.outlined)
    if (const int dr = drawn(opts.row_slots, r), dc = drawn(opts.col_slots, c - opts.outlined_col0); dr >= 0 && dc >= 0)
      cells.emplace_back(dr, dc);
  const bool hovering = result.hovered_row >= 0;
  const std::pair<int, int> pointed =
      hovering ? std::pair{result.hovered_row, result.hovered_col} : std::pair{opts.selected_row, opts.selected_col};
  const std::vector<CellBlock> blocks = outline_blocks(cells, me.in.rows, me.in.cols);
  const std::vector<CellBlock> one = outline_blocks(std::span(&pointed, 1), me.in.rows, me.in.cols);
  // The pointed cell inside an outlined block is framed in white alone: its dark edge would cross its neighbours.
  const bool inside = !one.empty() && std::any_of(blocks.begin(), blocks.end(), [&](const CellBlock& b) {
    return b.contains(one[0].row, one[0].col);
  });
  for (const bool white : {false, true}) {
    for (const CellBlock& b : blocks) frame(b, white);
    for (const CellBlock& b : one)
      if (white || !inside) frame(b, white);
  }
  for (const auto& [r, c] : cells)
    if (r >= 0 && r < me.in.rows && c >= 0 && c < me.in.cols) {
      const int row = original(opts.row_slots, r), col = original(opts.col_slots, c) + opts.outlined_col0;
      NoteOutlinedCell(row, col);
      NoteInSight(SightKind::Outlined, id,
                  "outlined cell (" + std::to_string(row) + ", " + std::to_string(col) + ") of " + id, g.cell(r, c),
                  g.cell(r + 1, c + 1));
      if (result.outlined_y < 0) result.outlined_y = g.cell(r, 0).y;
    }
  for (const CellBlock& b : one)
    NoteOutlinedCell(original(opts.row_slots, b.row), original(opts.col_slots, b.col) + opts.outlined_col0);
}

// Row labels on the left, column labels above; the hovered and highlighted ones in the accent colour.
void draw_labels(const char* id, const Matrix& m, const HeatmapOptions& opts, const Grid& g, const Measured& me,
                 const HeatmapResult& result) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), strong = GetStyle().accent;
  const float line_h = me.in.line_h, cw = g.cw, ch = g.ch;
  for (Eigen::Index r = 0; me.in.row_labels && r < m.rows(); ++r) {
    const std::string s = HeatmapLabel(opts.row_labels, r);
    const float y = g.cell(r, 0).y + (ch - line_h) / 2;
    if (ch >= line_h * 0.8f || r % std::max<Eigen::Index>(1, static_cast<Eigen::Index>(line_h / ch) + 1) == 0)
      dl->AddText({g.origin.x, y}, r == result.hovered_row || r == opts.highlight_row ? strong : text, s.c_str());
  }
  // Column labels wider than their cells: every k-th one whole (0, 16, 32, ... of 512 columns), as the rows do;
  // a token's name is shortened when its cell holds at least a letter and the ellipsis (a vocabulary of 64 in
  // narrow columns would otherwise be shortened to nothing).
  const bool shorten = opts.col_labels && cw - 2 >= ImGui::CalcTextSize("M\u2026").x;
  // Labels one per cell are centred on it; every k-th one starts at its column, a font height apart from the next,
  // or a row of numbers reads as one number ("124 186 248" from the back of a room).
  const auto spaced = [&](float gap) {
    return std::max<Eigen::Index>(1, static_cast<Eigen::Index>(std::ceil((me.widest_label + gap) / cw)));
  };
  if (opts.flags & HeatmapFlags_NoColumnLabels) return;
  const float font = ImGui::GetFontSize();
  const Eigen::Index every = shorten || spaced(kLabelGap) == 1 ? 1 : spaced(font);
  // A matrix whose cells show their numbers, its columns named: a column without its name cannot be found ("look
  // down the cat column").
  if (LayoutCheckOn() && every > 1 && opts.col_labels && me.want_values && cw >= font && ch >= font)
    ReportHere(check_name(id, m) + "1 column in " + std::to_string(every) + " named (cells " + short_number(cw) +
               " px wide)");
  for (Eigen::Index c = 0; c < m.cols(); c += every) {
    const std::string full = HeatmapLabel(opts.col_labels, c);
    const std::string s = every > 1 ? full : FitText(full, cw - 2);
    if (s.empty()) continue;
    const float w = ImGui::CalcTextSize(s.c_str()).x;
    dl->AddText({g.cell(0, c).x + (every > 1 ? 0.0f : (cw - w) / 2), g.origin.y},
                c == result.hovered_col || c == opts.highlight_col ? strong : text, s.c_str());
  }
}

void cell_tooltip(const Matrix& m, const HeatmapOptions& opts, const HeatmapResult& result) {
  if (result.hovered_row < 0 || (opts.flags & HeatmapFlags_NoTooltip)) return;
  const double x = m(result.hovered_row, result.hovered_col);
  ImGui::BeginTooltip();
  ImGui::Text("%s \u2192 %s:  %s", HeatmapLabel(opts.row_labels, result.hovered_row).c_str(),
              HeatmapLabel(opts.col_labels, result.hovered_col).c_str(),
              format_fixed(x, matrix_decimals(m, opts.visible)).c_str());
  ImGui::EndTooltip();
}

}  // namespace

namespace {

// A focused heatmap's options with the highlighted and selected rows and columns where they are drawn.
HeatmapOptions drawn_options(const HeatmapOptions& given) {
  HeatmapOptions o = given;
  if (o.row_slots.empty() && o.col_slots.empty()) return o;
  o.highlight_row = drawn(o.row_slots, o.highlight_row);
  o.selected_row = drawn(o.row_slots, o.selected_row);
  o.highlight_col = drawn(o.col_slots, o.highlight_col);
  o.selected_col = drawn(o.col_slots, o.selected_col);
  return o;
}

}  // namespace

HeatmapResult Heatmap(const char* id, const Matrix& m, const HeatmapOptions& given) {
  const HeatmapOptions opts = drawn_options(given);
  HeatmapResult result;
  ImGui::PushID(id);
  const ImGuiID imgui_id = ImGui::GetID("##heatmap");
  const bool labels = !(opts.flags & HeatmapFlags_NoLabels);
  const bool legend = !(opts.flags & HeatmapFlags_NoLegend);
  const Measured me = measure(m, opts, labels, legend);
  const HeatmapLayout l = layout_heatmap(me.in);
  Grid g;
  g.origin = ImGui::GetCursorScreenPos();
  g.at = {g.origin.x + l.label_w, g.origin.y + l.header_h};
  g.cw = l.cell_w;
  g.ch = l.cell_h;
  g.end = g.cell(m.rows(), m.cols());
  const ValueRange range = opts.range ? *opts.range : remembered_range(m, opts.map, opts.visible);
  // Cells that show numbers set the legend's decimals; a matrix too big for numbers keeps the short form.
  const LegendEnds ends = legend_ends(range, me.want_values ? std::optional<int>(me.wanted_decimals) : std::nullopt);
  result.size = {std::max(l.width, legend ? l.label_w + legend_min_width(ends) : 0.0f), l.height};

  ImGui::InvisibleButton("##cells", result.size);
  NoteInSight(SightKind::Matrix, id,
              std::string("matrix ") + id + " [" + std::to_string(m.rows()) + "\u00D7" + std::to_string(m.cols()) + "]",
              g.origin, {g.origin.x + result.size.x, g.origin.y + result.size.y});
  hover(g, me, opts, result);
  if (result.hovered_row >= 0 &&
      (elided(opts.row_slots, result.hovered_row) || elided(opts.col_slots, result.hovered_col)))
    result = {.size = result.size};  // an elided run has no cell to point at
  if (l.texture) {
    // Scrolled out of sight, a texture is not coloured: the Model view's column holds dozens of large heatmaps, a
    // few on screen, and each new forward pass would otherwise colour them all.
    const float scale = ImGui::GetIO().DisplayFramebufferScale.x;
    const ImVec2 pixels{(g.end.x - g.at.x) * scale, (g.end.y - g.at.y) * scale};
    if (ImGui::IsItemVisible())
      ImGui::GetWindowDrawList()->AddImage(texture_for(imgui_id, m, opts.map, range, opts.visible, pixels), g.at,
                                           g.end);
  } else {
    draw_cells(id, m, opts, g, me, range);
  }
  draw_cell_marks(id, opts, g, me, result);
  if (labels) draw_labels(id, m, opts, g, me, result);
  if (legend)
    draw_colour_legend(ImGui::GetWindowDrawList(), {g.at.x, g.end.y + 2},
                       std::max(g.end.x - g.at.x, legend_min_width(ends)), opts.map, range, ends);
  // Right-click: the matrix as a picture for a slide, or as text for a spreadsheet.
  // A focused matrix has no numbers where it is elided: its picture, but no CSV of made-up zeros.
  const bool focused = !opts.row_slots.empty() || !opts.col_slots.empty();
  if (!(opts.flags & HeatmapFlags_NoPictureMenu))
    PictureMenu(id, g.origin, {g.origin.x + result.size.x, g.origin.y + result.size.y}, focused ? nullptr : &m,
                opts.row_labels, opts.col_labels);
  cell_tooltip(m, opts, result);
  ImGui::PopID();
  result.hovered_row = original(opts.row_slots, result.hovered_row);
  result.hovered_col = original(opts.col_slots, result.hovered_col);
  return result;
}

bool HeatmapShowsNumbers(const Matrix& m) { return shows_numbers(m); }

float HeatmapValueWidth(const Matrix& m, const Matrix* visible) {
  if (!HeatmapShowsNumbers(m)) return 0;
  // The equation asks for each term's width several times a frame, as it tries layouts: remembered by content
  // (hashing 1,024 numbers costs far less than formatting and measuring them; matrices built each frame from the
  // trace share addresses, so the address alone would not do).
  std::uint64_t key = 1469598103934665603ull;
  const auto mix = [&](const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t k = 0; k < n; ++k) key = (key ^ b[k]) * 1099511628211ull;
  };
  const float font = cell_font_size();
  const Eigen::Index shape[] = {m.rows(), m.cols()};
  mix(shape, sizeof shape);
  mix(&font, sizeof font);
  mix(m.data(), sizeof(double) * static_cast<std::size_t>(m.size()));
  if (visible) mix(visible->data(), sizeof(double) * static_cast<std::size_t>(visible->size()));
  static std::unordered_map<std::uint64_t, float> cache;
  if (const auto it = cache.find(key); it != cache.end()) return it->second;
  if (cache.size() > 4096) cache.clear();
  return cache[key] = widest_value(m, visible, matrix_decimals(m, visible)) + 2 * cell_pad(cell_font());
}

void PushHeatmapVersion(std::uint64_t version) { versions().push_back(version); }
void PopHeatmapVersion() { versions().pop_back(); }
std::uint64_t HeatmapVersion() { return current_version(); }
void PushHeatmapRanges(const KnownRanges* known) { known_ranges().push_back(known); }
void PopHeatmapRanges() { known_ranges().pop_back(); }

std::uint64_t TexturePixelsVersion(ImTextureID texture) {
  const auto it = pixels_versions().find(static_cast<GLuint>(reinterpret_cast<std::intptr_t>(texture)));
  return it == pixels_versions().end() ? 0 : it->second;
}

void ReleaseHeatmapTextures() {
  for (auto& [id, t] : textures())
    if (t.id) glDeleteTextures(1, &t.id);
  textures().clear();
  pixels_versions().clear();
}

}  // namespace attn::ui
