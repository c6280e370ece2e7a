// Colour maps (ui/logic/colour_map): viridis and the diverging map, colour ranges, packed colours.
#include "helpers.h"
#include "ui/logic/colour_map.h"
#include "ui/logic/step_matrices.h"

using namespace attn;
using namespace attn::ui;
using namespace attn::test;

namespace {

double luminance(Rgb c) { return 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b; }

}  // namespace

TEST_CASE("viridis runs dark purple to yellow and gets lighter all the way") {
  const Rgb lo = sample(ColourMap::Sequential, 0.0), hi = sample(ColourMap::Sequential, 1.0);
  CHECK(lo.r == doctest::Approx(0.267f));
  CHECK(lo.b == doctest::Approx(0.329f));
  CHECK(hi.r == doctest::Approx(0.993f));
  CHECK(hi.g == doctest::Approx(0.906f));
  double previous = -1;
  for (int i = 0; i <= 100; ++i) {
    const double l = luminance(sample(ColourMap::Sequential, i / 100.0));
    CHECK(l > previous);  // monotonic lightness: readable in grey, and by colour-blind viewers
    previous = l;
  }
  CHECK(luminance(sample(ColourMap::Sequential, -5)) == luminance(lo));  // clamped
}

TEST_CASE("the diverging map is white at 0, blue below, red above, symmetric in lightness") {
  const Rgb mid = sample(ColourMap::Diverging, 0.5);
  CHECK(mid.r == doctest::Approx(0.97f));
  CHECK(mid.g == doctest::Approx(0.97f));
  const Rgb neg = sample(ColourMap::Diverging, 0.1), pos = sample(ColourMap::Diverging, 0.9);
  CHECK(neg.b > neg.r);
  CHECK(pos.r > pos.b);
  CHECK(std::abs(luminance(sample(ColourMap::Diverging, 0.25)) - luminance(sample(ColourMap::Diverging, 0.75))) < 0.12);
}

TEST_CASE("colour ranges: symmetric about 0 for signed values, [0, 1] for weights, hidden cells ignored") {
  const Matrix m = mat({{1, -3}, {2, 0.5}});
  const ValueRange d = auto_range(m, ColourMap::Diverging);
  CHECK(d.lo == -3);
  CHECK(d.hi == 3);
  const ValueRange w = auto_range(mat({{0.2, 0.7}}), ColourMap::Sequential);
  CHECK(w.lo == 0);
  CHECK(w.hi == 1);
  const ValueRange s = auto_range(mat({{2, 5}}), ColourMap::Sequential);
  CHECK(s.lo == 2);
  CHECK(s.hi == 5);
  const double inf = std::numeric_limits<double>::infinity();
  const Matrix visible = mat({{1, 0}, {1, 1}});
  const ValueRange v = auto_range(mat({{1, -inf}, {-2, 9}}), ColourMap::Diverging, &visible);
  CHECK(v.lo == -9);
  CHECK(v.hi == 9);
  CHECK(normalise(0, v) == 0.5);
  CHECK(normalise(100, v) == 1.0);
  const ValueRange zero = auto_range(Matrix::Zero(2, 2), ColourMap::Diverging);
  CHECK(zero.lo == -1);
  CHECK(zero.hi == 1);
}

TEST_CASE("colour ranges of a large non-square matrix: every cell counts, wherever it sits (lanes and the tail)") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  Matrix m = Matrix::Constant(37, 29, 0.5);  // 1073 cells: 134 groups of 8 and a tail of 1
  Matrix visible = Matrix::Ones(37, 29);
  m(36, 28) = 7.0;   // the tail
  m(0, 3) = -2.0;    // lane 3 of the first group
  m(20, 10) = -inf;  // not finite: skipped
  m(5, 5) = nan;
  m(30, 1) = 50.0;  // hidden: skipped
  visible(30, 1) = 0.0;
  const ValueRange s = auto_range(m, ColourMap::Sequential, &visible);
  CHECK(s.lo == -2.0);
  CHECK(s.hi == 7.0);
  const ValueRange all = auto_range(m, ColourMap::Sequential);
  CHECK(all.lo == -2.0);
  CHECK(all.hi == 50.0);
  visible(36, 28) = 0.0;
  CHECK(auto_range(m, ColourMap::Sequential, &visible).hi == 0.5);
  CHECK(auto_range(Matrix::Constant(3, 5, -inf), ColourMap::Sequential).lo == 0.0);  // nothing finite: [0, 1]
}

TEST_CASE("packed colours use ImGui's byte order, and text picks the readable of black and white") {
  CHECK(pack({1, 0, 0}) == 0xFF0000FFu);
  CHECK(pack({0, 0, 1}, 0.5f) == 0x80FF0000u);
  CHECK(text_on({0.97f, 0.97f, 0.97f}).r < 0.1f);                // dark text on the white middle of the diverging map
  CHECK(text_on(sample(ColourMap::Sequential, 0.0)).r == 1.0f);  // white on dark purple
  CHECK(text_on(sample(ColourMap::Sequential, 1.0)).r < 0.1f);   // dark on yellow
}

TEST_CASE("the worker's ranges of a head's step results: every large signed result, found by matrix, map and mask") {
  Scenario s;
  for (int i = 0; i < 80; ++i) s.input.tokens.push_back("t" + std::to_string(i));  // scores 80 x 80: 6,400 cells
  s.input.embeddings = seeded_matrix(2, SeedStream::Embeddings, 80, 4);
  s.attention.heads = 2;
  s.attention.head_dim = 2;
  s.attention.mask = MaskKind::Causal;
  const Trace t = compute_trace(s);
  const HeadTrace& h = t.heads[1];
  const KnownRanges known = step_ranges(t, 1);
  // scores, scaled and masked; X (80 x 4), q and the outputs are small, and weights are drawn on [0, 1].
  REQUIRE(known.size() == 3);
  const auto symmetric = [](double a) { return ValueRange{-a, a}; };
  const auto check = [&](const Matrix& m, const Matrix* visible, ValueRange expected) {
    const ValueRange* r = find_range(known, m, ColourMap::Diverging, visible);
    REQUIRE(r != nullptr);
    CHECK(r->lo == expected.lo);
    CHECK(r->hi == expected.hi);
  };
  check(h.scores(), nullptr, symmetric(h.scores().cwiseAbs().maxCoeff()));
  check(h.scaled(), nullptr, symmetric(h.scaled().cwiseAbs().maxCoeff()));
  double visible_max = 0.0;  // masked's finite cells are the causal ones
  for (int i = 0; i < 80; ++i)
    for (int j = 0; j <= i; ++j) visible_max = std::max(visible_max, std::abs(h.masked()(i, j)));
  check(h.masked(), &*h.mask, symmetric(visible_max));
  CHECK(find_range(known, h.masked(), ColourMap::Diverging, nullptr) == nullptr);  // another mask: not this range
  CHECK(find_range(known, h.scores(), ColourMap::Sequential, nullptr) == nullptr);
  CHECK(find_range(known, t.heads[0].scores(), ColourMap::Diverging, nullptr) == nullptr);
  CHECK(step_ranges(t, 2).empty());  // no head 2
}

TEST_CASE("a palette colour made legible on its page keeps its hue and reaches the ratio") {
  const Rgb yellow{240 / 255.0f, 228 / 255.0f, 66 / 255.0f}, white{1, 1, 1}, black{0, 0, 0};
  CHECK(contrast_ratio(yellow, white) == doctest::Approx(1.322).epsilon(0.001));
  const Rgb on_white = legible_on(yellow, white, 4.5);
  CHECK(contrast_ratio(on_white, white) >= 4.5);
  CHECK(contrast_ratio(on_white, white) < 4.7);                     // no darker than it needs
  CHECK(on_white.r / on_white.b == doctest::Approx(240.0 / 66.0));  // toward black: the same hue
  const Rgb blue{0, 114 / 255.0f, 178 / 255.0f};
  CHECK(contrast_ratio(legible_on(blue, black, 4.5), black) >= 4.5);
  CHECK(legible_on(yellow, black, 4.5).r == yellow.r);  // already legible: unchanged
  CHECK(contrast_ratio(text_on(Rgb{0.15f, 0.52f, 0.55f}), Rgb{0.15f, 0.52f, 0.55f}) >= 4.5);  // teal mid-viridis
}
