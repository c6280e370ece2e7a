// How the Decode view fits its panel (ui/logic/decode_layout): lines of matrices that keep K and V of a KV head
// together, and the cell size and open sections that keep what a lesson page talks about in sight.
#include "helpers.h"
#include "ui/logic/decode_layout.h"

using namespace attn::ui;

namespace {

// Four sections (query, cache, attention, output) under a 100-pixel header, at three candidate cells.
SectionFitInput four_sections(float view_h) {
  SectionFitInput in;
  in.top = 100;
  in.view_h = view_h;
  in.folded_h = {30, 30, 30, 30};
  in.open_h = {{150, 300, 150, 250}, {120, 250, 120, 220}, {100, 200, 100, 200}};  // 950, 810, 700 in all
  return in;
}

}  // namespace

TEST_CASE("decode layout: a K and V pair never breaks across lines") {
  const std::vector<float> widths(6, 100.0f), ops(5, 10.0f);
  const std::vector<bool> pairs{false, true, false, true, false, true};  // K0 V0 K1 V1 K2 V2
  // Three terms fit a 330-pixel line; unpaired, V1 would end the first line and K2 start the second's.
  CHECK(flow_breaks(widths, ops, ops, {}, 330) == std::vector<FlowBreak>{{0, 3}, {3, 6}});
  CHECK(flow_breaks(widths, ops, ops, pairs, 330) == std::vector<FlowBreak>{{0, 2}, {2, 4}, {4, 6}});
  CHECK(flow_breaks(widths, ops, ops, pairs, 430) == std::vector<FlowBreak>{{0, 4}, {4, 6}});
  CHECK(flow_breaks(widths, ops, ops, pairs, 1000) == std::vector<FlowBreak>{{0, 6}});
  // Spaces between pairs are not written at the start of a line: four terms fit each 430-pixel line.
  const std::vector<float> no_leads(5, 0.0f);
  CHECK(flow_breaks(widths, ops, no_leads, pairs, 430) == std::vector<FlowBreak>{{0, 4}, {4, 6}});
  const std::vector<float> eight(8, 100.0f), seven_ops(7, 10.0f), seven_blanks(7, 0.0f);
  const std::vector<bool> four_pairs{false, true, false, true, false, true, false, true};
  CHECK(flow_breaks(eight, seven_ops, seven_blanks, four_pairs, 430) == std::vector<FlowBreak>{{0, 4}, {4, 8}});
  CHECK(flow_breaks(eight, seven_ops, seven_ops, four_pairs, 430) == std::vector<FlowBreak>{{0, 4}, {4, 6}, {6, 8}});
  // A pair wider than the line stays whole on a line of its own.
  const std::vector<float> wide{200, 200, 50}, wide_ops{10, 10};
  const std::vector<bool> first_pair{false, true, false};
  CHECK(flow_breaks(wide, wide_ops, wide_ops, first_pair, 300) == std::vector<FlowBreak>{{0, 2}, {2, 3}});
  CHECK(flow_breaks(wide, wide_ops, wide_ops, {}, 300) == std::vector<FlowBreak>{{0, 1}, {1, 3}});
  // Lines as even as their count allows: four heads in 330 px make two lines of two, not three and one.
  const std::vector<float> four(4, 100.0f), three_ops(3, 10.0f);
  CHECK(flow_breaks(four, three_ops, three_ops, {}, 330) == std::vector<FlowBreak>{{0, 2}, {2, 4}});
  CHECK(flow_breaks(four, three_ops, three_ops, {}, 430) == std::vector<FlowBreak>{{0, 4}});
  // A term starting a line writes its row labels (150 px), beside another it does not (100 px): three fit 370 px.
  const std::vector<float> labelled(6, 150.0f);
  CHECK(flow_breaks(widths, ops, no_leads, {}, 370, labelled) == std::vector<FlowBreak>{{0, 3}, {3, 6}});
  CHECK(flow_breaks(widths, ops, no_leads, {}, 360, labelled) == std::vector<FlowBreak>{{0, 2}, {2, 4}, {4, 6}});
}

TEST_CASE("decode layout: cells shrink before a section folds, and the page's sections stay open") {
  // Everything fits at the largest cell, or at the largest that lets it.
  CHECK(fit_sections(four_sections(1000)) == SectionFit{0, {true, true, true, true}, 0});
  CHECK(fit_sections(four_sections(820)) == SectionFit{1, {true, true, true, true}, 0});
  CHECK(fit_sections(four_sections(700)) == SectionFit{2, {true, true, true, true}, 0});
  // Without a lesson page nothing folds: the smallest cell, and the panel scrolls from its top.
  CHECK(fit_sections(four_sections(600)) == SectionFit{2, {true, true, true, true}, 0});
  // A page about the output (the last section): at the smallest cell the attention above it opens too (460), the
  // cache would make 630 and folds, the query then fits (530); the cells grow back as far as that lets them (590).
  SectionFitInput output_page = four_sections(600);
  output_page.focus = 3;
  CHECK(fit_sections(output_page) == SectionFit{1, {true, false, true, true}, 0});
  // With the cache preferred, it opens first (560) and leaves no room for the others: the smallest cell.
  output_page.preferred = 1;
  CHECK(fit_sections(output_page) == SectionFit{2, {false, true, false, true}, 0});
  // The user opened the query: it stays, so the cache no longer fits and the attention does (530; 590 at cell 1).
  output_page.forced_open = {true, false, false, false};
  CHECK(fit_sections(output_page) == SectionFit{1, {true, false, true, true}, 0});
}

TEST_CASE("decode layout: a page whose sections do not fit is scrolled to them, its end in sight") {
  SectionFitInput cache_page = four_sections(600);
  cache_page.focus = 1;  // cache, attention and output: 630 at the smallest cell, below a folded query (30)
  CHECK(fit_sections(cache_page) == SectionFit{2, {false, true, true, true}, 30});
  cache_page.view_h = 300;  // the end would need 330: the cache's heading (at 130) stays at the top instead
  CHECK(fit_sections(cache_page) == SectionFit{2, {false, true, true, true}, 130});
}

TEST_CASE("decode layout: a page about the cache and the attention may fold the output after them") {
  SectionFitInput cache_page = four_sections(500);
  cache_page.focus = 1;
  cache_page.focus_last = 2;  // cache and attention: 460 at the smallest cell, the others folded, under the header
  // Neither the query (530 with it) nor the output (630) fits beside them: both fold and nothing scrolls.
  CHECK(fit_sections(cache_page) == SectionFit{2, {false, true, true, false}, 0});
  // With room for one more, the query before the focus comes first (530); the output would then make 700.
  cache_page.view_h = 600;
  CHECK(fit_sections(cache_page) == SectionFit{2, {true, true, true, false}, 0});
  // Without a last section the output stays open and the page scrolls instead.
  cache_page.view_h = 500;
  cache_page.focus_last = -1;
  CHECK(fit_sections(cache_page) == SectionFit{2, {false, true, true, true}, 130});
}
