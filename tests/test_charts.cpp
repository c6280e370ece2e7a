// Chart axes without a window: positions along linear and log axes, tick values and labels, unit
// formats, where a series crosses a level, and where labels go. The KV-cache numbers are Llama 3 70B's
// (80 layers, 8 KV heads of 128, bf16): 2 · 80 · 8 · 128 · 2 = 327,680 bytes per token.
#include "helpers.h"

#include <algorithm>
#include <cmath>

#include "core/text_format.h"
#include "ui/logic/chart_axes.h"
#include "ui/logic/compare_text.h"
#include "ui/logic/cost_text.h"
#include "ui/logic/layout_check.h"
#include "ui/logic/line_style.h"

using namespace attn;
using namespace attn::ui;

namespace {

constexpr double KiB = 1024.0, MiB = KiB * 1024, GiB = MiB * 1024, TiB = GiB * 1024;

std::vector<double> majors(const std::vector<Tick>& ticks) {
  std::vector<double> v;
  for (const Tick& t : ticks)
    if (t.major) v.push_back(t.value);
  return v;
}

std::vector<std::string> labels(const std::vector<Tick>& ticks) {
  std::vector<std::string> v;
  for (const Tick& t : ticks)
    if (!t.label.empty()) v.push_back(t.label);
  return v;
}

bool minors_unlabelled(const std::vector<Tick>& ticks) {
  for (const Tick& t : ticks)
    if (!t.major && !t.label.empty()) return false;
  return true;
}

// 1, 2, 4, ..., 2^20 tokens.
std::vector<double> powers_of_two_to_1m() {
  std::vector<double> x;
  for (int e = 0; e <= 20; ++e) x.push_back(std::ldexp(1.0, e));
  return x;
}

}  // namespace

TEST_CASE("axis fractions: linear, log, and values a log axis cannot show") {
  const Axis lin{0, 80, AxisScale::Linear, NumberUnit::Plain, ""};
  CHECK(axis_fraction(20, lin) == 0.25);
  CHECK(axis_fraction(100, lin) == 1.25);  // outside: the widget clips
  CHECK(axis_value(0.25, lin) == 20);
  const Axis log{1, 1e4, AxisScale::Log10, NumberUnit::Plain, ""};
  CHECK(axis_fraction(100, log) == 0.5);
  CHECK(axis_fraction(1, log) == 0);
  CHECK(axis_fraction(1e4, log) == 1);
  CHECK(axis_fraction(0, log) == 0);
  CHECK(axis_fraction(-5, log) == 0);
  CHECK(axis_value(0.5, log) == 100);
  const Axis bytes{MiB, TiB, AxisScale::Log10, NumberUnit::Bytes, ""};
  CHECK(axis_fraction(GiB, bytes) == doctest::Approx(0.5).epsilon(1e-12));  // 2^30 halfway from 2^20 to 2^40
  CHECK(axis_value(axis_fraction(327680.0 * 131072, bytes), bytes) ==
        doctest::Approx(327680.0 * 131072).epsilon(1e-12));
}

TEST_CASE("bytes: 1024-based units, at most 3 significant digits, no trailing .0") {
  CHECK(format_unit(10737418240.0, NumberUnit::Bytes) == "10 GiB");
  CHECK(format_unit(327680, NumberUnit::Bytes) == "320 KiB");
  CHECK(format_unit(512, NumberUnit::Bytes) == "512 B");
  CHECK(format_unit(1024, NumberUnit::Bytes) == "1 KiB");
  CHECK(format_unit(80 * GiB, NumberUnit::Bytes) == "80 GiB");
  CHECK(format_unit(1.5 * TiB, NumberUnit::Bytes) == "1.5 TiB");
  CHECK(format_unit(2621440, NumberUnit::Bytes) == "2.5 MiB");
  CHECK(format_unit(80e9, NumberUnit::Bytes) == "74.5 GiB");     // 80 GB decimal
  CHECK(format_unit(1047552, NumberUnit::Bytes) == "1023 KiB");  // whole, not "0.999 MiB"
  CHECK(format_unit(1048575, NumberUnit::Bytes) == "1 MiB");     // 1023.999 KiB rounds into the next unit
  CHECK(format_unit(0, NumberUnit::Bytes) == "0 B");
}

TEST_CASE("tokens: multiples of 1024 as k and M, everything else exact with separators") {
  CHECK(format_unit(131072, NumberUnit::Tokens) == "128k");
  CHECK(format_unit(1048576, NumberUnit::Tokens) == "1M");
  CHECK(format_unit(32768, NumberUnit::Tokens) == "32k");
  CHECK(format_unit(1024, NumberUnit::Tokens) == "1k");
  CHECK(format_unit(1, NumberUnit::Tokens) == "1");
  CHECK(format_unit(512, NumberUnit::Tokens) == "512");
  CHECK(format_unit(1000, NumberUnit::Tokens) == "1,000");
  CHECK(format_unit(1536, NumberUnit::Tokens) == "1,536");
  CHECK(format_unit(244140.625, NumberUnit::Tokens) == "244,141");
  CHECK(format_unit(2.5, NumberUnit::Tokens) == "2.5");
}

TEST_CASE("FLOPs: 1000-based prefixes -- plain numbers: 3 significant digits") {
  CHECK(format_unit(262144, NumberUnit::Flops) == "262 kFLOP");
  CHECK(format_unit(1000, NumberUnit::Flops) == "1 kFLOP");
  CHECK(format_unit(2.6e6, NumberUnit::Flops) == "2.6 MFLOP");
  CHECK(format_unit(262e9, NumberUnit::Flops) == "262 GFLOP");
  CHECK(format_unit(1.2e12, NumberUnit::Flops) == "1.2 TFLOP");
  CHECK(format_unit(3e15, NumberUnit::Flops) == "3 PFLOP");
  CHECK(format_unit(512, NumberUnit::Flops) == "512 FLOP");
  CHECK(format_unit(999600, NumberUnit::Flops) == "1 MFLOP");  // 999.6 kFLOP rounds into the next unit
  CHECK(format_unit(83, NumberUnit::Plain) == "83");
  CHECK(format_unit(0.25, NumberUnit::Plain) == "0.25");
  CHECK(format_unit(1234, NumberUnit::Plain) == "1230");
  CHECK(format_unit(-0.125, NumberUnit::Plain) == "-0.125");
  CHECK(format_unit(1.5e9, NumberUnit::Plain) == "1.5e9");
  CHECK(format_unit(0.00002, NumberUnit::Plain) == "2e-5");
}

TEST_CASE("exact values for tooltips: every digit, then the short form where it is shorter") {
  CHECK(format_exact(10737418240.0, NumberUnit::Bytes) == "10,737,418,240 bytes (10.0 GiB)");
  CHECK(format_exact(512, NumberUnit::Bytes) == "512 bytes");
  CHECK(format_exact(1, NumberUnit::Bytes) == "1 byte");
  CHECK(format_exact(131072, NumberUnit::Tokens) == "131,072 tokens (128k)");
  CHECK(format_exact(1000, NumberUnit::Tokens) == "1,000 tokens");
  CHECK(format_exact(262144, NumberUnit::Flops) == "262,144 FLOP (262 kFLOP)");
  CHECK(format_exact(0.7427, NumberUnit::Plain) == "0.7427");
  CHECK(format_exact(1234567, NumberUnit::Plain) == "1,234,567");
}

TEST_CASE("log bytes axis 1 MiB .. 1 TiB: majors at powers of 1024, minors at the powers of 2 between") {
  const Axis a{MiB, TiB, AxisScale::Log10, NumberUnit::Bytes, "KV cache"};
  const std::vector<Tick> t = axis_ticks(a, 6);
  CHECK(majors(t) == std::vector<double>{MiB, GiB, TiB});
  CHECK(labels(t) == std::vector<std::string>{"1 MiB", "1 GiB", "1 TiB"});
  CHECK(t.size() == 21);  // 2^20 .. 2^40
  CHECK(t[1].value == 2 * MiB);
  CHECK_FALSE(t[1].major);
  CHECK(minors_unlabelled(t));
  // Room for two labels: every other power of 1024, the skipped one stays as a minor tick.
  const std::vector<Tick> two = axis_ticks(a, 2);
  CHECK(majors(two) == std::vector<double>{MiB, TiB});
  CHECK(two.size() == 3);
  CHECK(two[1].value == GiB);
  // Within one power of 1024, powers of 2 are labelled.
  CHECK(labels(axis_ticks({100 * KiB, 800 * KiB, AxisScale::Log10, NumberUnit::Bytes, ""}, 6)) ==
        std::vector<std::string>{"128 KiB", "256 KiB", "512 KiB"});
}

TEST_CASE("log tokens axis 1 .. 1M: decades below 1k, powers of 2 from 1k, thinned to the room there is") {
  const Axis a{1, 1048576, AxisScale::Log10, NumberUnit::Tokens, "context"};
  const std::vector<Tick> nine = axis_ticks(a, 9);
  CHECK(labels(nine) == std::vector<std::string>{"1", "10", "100", "1k", "4k", "16k", "64k", "256k", "1M"});
  CHECK(majors(nine) == std::vector<double>{1, 10, 100, 1024, 4096, 16384, 65536, 262144, 1048576});
  CHECK(minors_unlabelled(nine));
  const std::vector<Tick> six = axis_ticks(a, 6);
  CHECK(labels(six) == std::vector<std::string>{"1", "10", "100", "1k", "32k", "1M"});
  // Minors: 2..9 x 1, 10, 100 and the powers of 2 from 2k that are not labelled; nothing at 1000.
  CHECK(six.size() == 6 + 24 + 8);
  for (const Tick& t : six) CHECK(t.value != 1000);
  CHECK(labels(axis_ticks(a, 4)).size() <= 4);
}

TEST_CASE("other log axes: decades, every 3rd when crowded -- 1, 2, 5 within less than two decades") {
  const std::vector<Tick> f = axis_ticks({1e3, 1e15, AxisScale::Log10, NumberUnit::Flops, ""}, 5);
  CHECK(labels(f) == std::vector<std::string>{"1 kFLOP", "1 MFLOP", "1 GFLOP", "1 TFLOP", "1 PFLOP"});
  CHECK(f.size() == 13);  // the skipped decades stay as minor ticks
  CHECK(minors_unlabelled(f));
  const std::vector<Tick> p = axis_ticks({1, 100, AxisScale::Log10, NumberUnit::Plain, ""}, 6);
  CHECK(labels(p) == std::vector<std::string>{"1", "10", "100"});
  CHECK(p.size() == 19);  // and 2..9, 20..90 between
  CHECK(labels(axis_ticks({2, 50, AxisScale::Log10, NumberUnit::Plain, ""}, 6)) ==
        std::vector<std::string>{"2", "5", "10", "20", "50"});
}

TEST_CASE("linear axes: 1-2-5 steps, in whole KiB/MiB/GiB for bytes") {
  const std::vector<Tick> t = axis_ticks({0, 83, AxisScale::Linear, NumberUnit::Plain, ""}, 6);
  CHECK(majors(t) == std::vector<double>{0, 20, 40, 60, 80});
  CHECK(labels(t) == std::vector<std::string>{"0", "20", "40", "60", "80"});
  CHECK(labels(axis_ticks({0, 83, AxisScale::Linear, NumberUnit::Plain, ""}, 10)).size() == 9);  // steps of 10
  const std::vector<Tick> b = axis_ticks({0, 1.5 * GiB, AxisScale::Linear, NumberUnit::Bytes, ""}, 4);
  CHECK(majors(b) == std::vector<double>{0, 0.5 * GiB, GiB, 1.5 * GiB});
  CHECK(labels(b) == std::vector<std::string>{"0 B", "512 MiB", "1 GiB", "1.5 GiB"});
  CHECK(labels(axis_ticks({0.1, 0.7, AxisScale::Linear, NumberUnit::Plain, ""}, 4)) ==
        std::vector<std::string>{"0.2", "0.4", "0.6"});
  // Neighbouring labels never print the same: 4 significant digits where the step needs them.
  CHECK(labels(axis_ticks({1000, 1010, AxisScale::Linear, NumberUnit::Plain, ""}, 3)) ==
        std::vector<std::string>{"1000", "1005", "1010"});
}

TEST_CASE("nice axes widen data to tick values") {
  const Axis lin = nice_axis(3, 83, AxisScale::Linear, NumberUnit::Plain, "heads");
  CHECK(lin.lo == 0);
  CHECK(lin.hi == 100);
  CHECK(lin.title == "heads");
  const Axis kv = nice_axis(40960, 2621440.0 * 1048576, AxisScale::Log10, NumberUnit::Bytes, "");
  CHECK(kv.lo == 32 * KiB);
  CHECK(kv.hi == 4 * TiB);  // 2.5 TiB up to the next power of 2
  const Axis ctx = nice_axis(1, 1048576, AxisScale::Log10, NumberUnit::Tokens, "");
  CHECK(ctx.lo == 1);
  CHECK(ctx.hi == 1048576);
  const Axis flops = nice_axis(2.6e6, 1.2e12, AxisScale::Log10, NumberUnit::Flops, "");
  CHECK(flops.lo == 1e6);
  CHECK(flops.hi == 1e13);
  CHECK(nice_axis(0, 1e6, AxisScale::Log10, NumberUnit::Plain, "").lo == 1e3);  // no log of 0: 3 decades down
}

TEST_CASE("interpolation in linear and log space, and breaks at values a log axis cannot show") {
  const std::vector<double> x{0, 10, 20}, y{0, 100, 50};
  CHECK(*interpolate_y(x, y, 15, AxisScale::Linear, AxisScale::Linear) == 75);
  CHECK_FALSE(interpolate_y(x, y, 25, AxisScale::Linear, AxisScale::Linear).has_value());
  // y = 0 cannot sit on a log axis: the segment from it does not count.
  CHECK_FALSE(interpolate_y(x, y, 5, AxisScale::Linear, AxisScale::Log10).has_value());
  const std::vector<double> t = powers_of_two_to_1m();
  std::vector<double> kv;
  for (double v : t) kv.push_back(327680.0 * v);
  CHECK(*interpolate_y(t, kv, 3, AxisScale::Log10, AxisScale::Log10) == doctest::Approx(983040).epsilon(1e-12));
}

TEST_CASE("labels: the first free candidate, inside the bounds, clear of what is there") {
  const Box bounds{0, 0, 100, 100};
  const std::vector<std::vector<Box>> candidates{
      {{10, 10, 30, 20}},                    // free
      {{20, 15, 40, 25}, {20, 30, 40, 40}},  // first overlaps the label above, second is free
      {{90, 0, 110, 10}},                    // leaves the bounds
      {{50, 50, 60, 60}},                    // on something already there
  };
  const std::vector<int> chosen = place_labels(candidates, {{45, 45, 55, 55}}, bounds, 2);
  CHECK(chosen == std::vector<int>{0, 1, -1, -1});
  CHECK(overlaps({0, 0, 10, 10}, {11, 0, 20, 10}, 2));
  CHECK_FALSE(overlaps({0, 0, 10, 10}, {13, 0, 20, 10}, 2));
}

TEST_CASE("labels on one line spread apart as a group around where they want to be") {
  // Reference lines 9 px apart and a third further down; labels 20 px tall.
  const std::vector<float> want{0, 9, 38};
  CHECK(spread_labels(want, 20, -100, 100) == std::vector<float>{-5.5f, 14.5f, 38});
  CHECK(spread_labels(std::vector<float>{9, 0}, 20, -100, 100) == std::vector<float>{14.5f, -5.5f});  // any order
  CHECK(spread_labels(std::vector<float>{0, 0}, 20, 0, 100) == std::vector<float>{10, 30});           // kept inside
  CHECK(spread_labels(std::vector<float>{95}, 20, 0, 100) == std::vector<float>{90});
}

TEST_CASE("crowded labels: all placed where greedy placement in order drops one -- lines kept clear if possible") {
  const Box bounds{0, 0, 100, 100};
  const Box x{0, 0, 10, 10}, y{20, 0, 30, 10};
  // In order, the first label takes the only place the second has.
  CHECK(place_labels(std::vector<std::vector<Box>>{{x, y}, {x}}, {}, bounds, 1) == std::vector<int>{0, -1});
  const std::vector<std::vector<LabelSpot>> both{{{x, {}}, {y, {}}}, {{x, {}}}};
  CHECK(place_labels_best(both, {}, {}, bounds, 1) == std::vector<int>{1, 0});
  // Clear of a line where there is room (the second place), over it where there is none.
  const Box line{0, 50, 100, 51};
  const std::vector<std::vector<LabelSpot>> near_line{{{{0, 45, 10, 55}, {}}, {{0, 60, 10, 70}, {}}},
                                                      {{{40, 45, 50, 55}, {}}}};
  CHECK(place_labels_best(near_line, {}, {line}, bounds, 1) == std::vector<int>{1, 0});
  // A leader may not run over a dot (or under another label).
  const Box dot{60, 60, 64, 64};
  const std::vector<std::vector<LabelSpot>> leaders{
      {{{70, 70, 90, 80}, Box{55, 55, 70, 70}}, {{70, 20, 90, 30}, Box{62, 30, 63, 58}}}};
  CHECK(place_labels_best(leaders, {dot}, {}, bounds, 1) == std::vector<int>{1});
  CHECK(place_labels_best(std::vector<std::vector<LabelSpot>>{{{{90, 90, 110, 95}, {}}}}, {}, {}, bounds, 1) ==
        std::vector<int>{-1});  // nowhere inside: left out
}

TEST_CASE("the cost view writes C_attn with its parts and the model's numbers") {
  attn::ModelShape v3;
  v3.variant = attn::Variant::Mla;
  v3.heads = v3.kv_heads = 128;
  v3.head_dim = 128;
  v3.latent_dim = 512;
  v3.rope_dim = 64;
  CHECK(attention_cost_text(v3) ==
        "C_attn = 2\u00B7H\u00B7(d_c + d_R) + 2\u00B7H\u00B7d_c = 2\u00B7128\u00B7(512 + 64) + 2\u00B7128\u00B7512 = "
        "278,528 FLOPs per (query, key) pair: the scores read the latent and the 64-dim RoPE key, the sum reads the "
        "latent");
  // Its MHA form: keys of 128 + 64, values of 128.
  attn::ModelShape mha = v3;
  mha.variant = attn::Variant::Mha;
  mha.latent_dim = 0;
  CHECK(attention_cost_text(mha) ==
        "C_attn = 2\u00B7H\u00B7(d + d_R) + 2\u00B7H\u00B7d = 2\u00B7128\u00B7(128 + 64) + 2\u00B7128\u00B7128 = "
        "81,920 FLOPs per (query, key) pair: the scores read the 128-dim key and its 64-dim RoPE part, the sum reads "
        "the value");
  v3.rope_dim = 0;
  CHECK(attention_cost_text(v3) ==
        "C_attn = 4\u00B7H\u00B7d_c = 4\u00B7128\u00B7512 = 262,144 FLOPs per (query, key) pair");
  attn::ModelShape llama;
  llama.variant = attn::Variant::Gqa;
  llama.heads = 64;
  llama.kv_heads = 8;
  llama.head_dim = 128;
  CHECK(attention_cost_text(llama) ==
        "C_attn = 4\u00B7H\u00B7d = 4\u00B764\u00B7128 = 32,768 FLOPs per (query, key) pair");
}

TEST_CASE("the cost view says whether sparse attention pays, and from which context on, never \"1/0\"") {
  // gpt-2-small: C_attn = 4 · 12 · 64 = 3,072 against DeepSeek's indexer C_idx = 2 · 64 · 128 = 16,384: 5.3 times.
  CHECK(
      sparse_attention_text(3072, 16384, 2048) ==
      "Here sparse attention never pays: its indexer alone costs 5.3\u00D7 as much per pair as this model's attention "
      "(16,384 against 3,072 FLOPs), so its line stays above the KV cache's. It pays in models whose attention costs "
      "more per pair than the indexer, such as DeepSeek's (C_attn = 278,528).");
  // deepseek-v3: C_attn = 2 · 128 · (512 + 64) + 2 · 128 · 512 = 278,528, 17 times the indexer's; k = 2,048 costs
  // the same at L = 2,048 · 278,528 / 262,144 = 2,176 and less from 2,177 on.
  CHECK(sparse_attention_text(278528, 16384, 2048) ==
        "Sparse attention still scans all L keys, but its indexer costs 1/17 of attention per pair, and it attends to "
        "the "
        "top 2,048 only: it costs less than attending to every key from L = 2,177 tokens on.");
  // A whole ratio reads as one: 1/2, not 1/2.0 (32,768 per pair against 16,384; 2,048 x 2 = 4,096 breaks even).
  CHECK(
      sparse_attention_text(32768, 16384, 2048) ==
      "Sparse attention still scans all L keys, but its indexer costs 1/2 of attention per pair, and it attends to the "
      "top 2,048 only: it costs less than attending to every key from L = 4,097 tokens on.");
}

TEST_CASE("a polyline thinned to its column envelope: first, lowest, highest and last of each pixel column") {
  // Column 0: five points; column 1: one; column 2: two, the second higher.
  const std::vector<float> xs = {0.0f, 0.2f, 0.4f, 0.6f, 0.8f, 1.5f, 2.0f, 2.9f};
  const std::vector<float> ys = {5.0f, 9.0f, 1.0f, 4.0f, 6.0f, 3.0f, 2.0f, 7.0f};
  CHECK(column_envelope(xs, ys) == std::vector<std::size_t>{0, 1, 2, 4, 5, 6, 7});
  CHECK(column_envelope({}, {}).empty());
  const std::vector<float> one = {3.5f};
  CHECK(column_envelope(one, one) == std::vector<std::size_t>{0});
  std::vector<float> many_x, many_y;  // 3,000 steps across 500 columns: at most four points a column
  for (int i = 0; i < 3000; ++i) {
    many_x.push_back(static_cast<float>(i) / 6.0f);
    many_y.push_back(static_cast<float>((i * 7919) % 101));
  }
  const std::vector<std::size_t> kept = column_envelope(many_x, many_y);
  CHECK(kept.size() <= 2000);
  CHECK(kept.front() == 0);
  CHECK(kept.back() == 2999);
}

TEST_CASE("the Compare view's formulas count heads in the singular and the plural") {
  const std::array<std::string, 4> one = cache_formulas(1, 0, 3, 2);
  CHECK(one[0] == "2 \u00D7 1 head \u00D7 3");
  CHECK(one[1] == "1 head: no grouping");
  CHECK(one[2] == "2 \u00D7 1 KV head \u00D7 3");
  CHECK(one[3] == "latent_dim 2");
  const std::array<std::string, 4> four = cache_formulas(4, 2, 8, 6);
  CHECK(four[0] == "2 \u00D7 4 heads \u00D7 8");
  CHECK(four[1] == "2 \u00D7 2 KV heads \u00D7 8");
  CHECK(cache_formulas(4, 1, 8, 6)[1] == "2 \u00D7 1 KV head \u00D7 8");
  CHECK(no_grouping_text(7) == "7 heads: no grouping");
}

TEST_CASE("line styles: every series of a chart differs from the others by dash or marker, not colour alone") {
  for (std::size_t i = 0; i < 20; ++i)
    for (std::size_t j = i + 1; j < 20; ++j) {
      CAPTURE(i);
      CAPTURE(j);
      CHECK(series_style(i) != series_style(j));
    }
  // The eight head curves: orange (0) and vermillion (5), sky blue (1) and blue (4) merge on a projector; their
  // dashes differ as well as their markers.
  CHECK(series_style(0) == LineStyle{LineDash::Solid, LineMarker::None});
  CHECK(series_style(5) == LineStyle{LineDash::Dashed, LineMarker::Circle});
  CHECK(series_style(1).dash != series_style(4).dash);
  CHECK(series_style(7) == LineStyle{LineDash::DashDot, LineMarker::Circle});
  CHECK(series_style(8) == LineStyle{LineDash::Solid, LineMarker::Square});
  CHECK(dash_lengths(LineDash::Solid).empty());
  CHECK(dash_lengths(LineDash::Dashed) == std::vector<float>{10.0f, 6.0f});
  CHECK(dash_lengths(LineDash::DashDot).size() == 4);
}

TEST_CASE("markers: spaced apart along the line, always on its last point") {
  const std::vector<float> xs{0, 10, 20, 30, 40, 50, 60, 70, 80, 85};
  // 85, the end, is only 25 past 60: the marker at 60 gives way to it.
  CHECK(marker_points(xs, 30) == std::vector<std::size_t>{0, 3, 9});
  CHECK(marker_points(xs, 5) == std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(marker_points(std::vector<float>{0, 3}, 30) == std::vector<std::size_t>{1});
  CHECK(marker_points(std::vector<float>{}, 30).empty());
}

TEST_CASE("end labels of eight curves ending together: spread one line apart, inside the column's bounds") {
  // Eight head curves at step 3,000 end within 6 px of each other near the plot's bottom (y = 300 of 100..310).
  const std::vector<float> want{300, 301, 302, 299, 304, 305, 298, 303};
  const float h = 20;
  const std::vector<float> at = spread_labels(want, h, 90, 310);
  std::vector<float> sorted = at;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 1; i < sorted.size(); ++i) CHECK(sorted[i] - sorted[i - 1] >= h - 1e-3f);
  CHECK(sorted.front() - h / 2 >= 90);
  CHECK(sorted.back() + h / 2 == doctest::Approx(310));  // pushed up from the bottom bound, no further
  // Order kept: the label of the lowest line is the lowest label.
  CHECK(at[5] == doctest::Approx(sorted.back()));
  CHECK(at[6] == doctest::Approx(sorted.front()));
}

TEST_CASE("thinned decades start at the axis' floor: its bottom tick is labelled") {
  // 10 GFLOP .. 10 EFLOP in room for 4 labels: every 3rd decade from the floor, not from 10^12.
  const std::vector<Tick> f = axis_ticks({1e10, 1e19, AxisScale::Log10, NumberUnit::Flops, ""}, 4);
  CHECK(labels(f) == std::vector<std::string>{"10 GFLOP", "10 TFLOP", "10 PFLOP", "10 EFLOP"});
  CHECK(f.front().value == 1e10);
  CHECK(f.front().major);
}

TEST_CASE("chart values keep 3 significant digits, zeros included: 2.30 GB beside 2.26 GB") {
  CHECK(attn::significant_text(2.3, 3) == "2.30");
  CHECK(attn::significant_text(10.74, 3) == "10.7");
  CHECK(attn::significant_text(537.2, 3) == "537");
  CHECK(attn::significant_text(1234.6, 3) == "1235");  // a whole number keeps its digits
  CHECK(attn::significant_text(9.996, 3) == "10.0");   // rounding up into the next decade keeps 3 digits
  CHECK(attn::significant_text(0.04567, 3) == "0.0457");
  CHECK(attn::significant_text(-2.3, 3) == "-2.30");
  CHECK(attn::significant_text(0, 3) == "0");
  // deepseek-v3's cache at 32,768 tokens: 70,272 bytes a token.
  CHECK(format_value(70272.0 * 32768, NumberUnit::DecimalBytes) == "2.30 GB");
  CHECK(format_unit(70272.0 * 32768, NumberUnit::DecimalBytes) == "2.3 GB");  // a tick's form drops the zero
  CHECK(format_value(2.26e9, NumberUnit::DecimalBytes) == "2.26 GB");
  CHECK(format_value(537e6, NumberUnit::DecimalBytes) == "537 MB");
  CHECK(format_value(999.6e6, NumberUnit::DecimalBytes) == "1.00 GB");
  CHECK(format_value(1e10, NumberUnit::DecimalBytes) == "10.0 GB");
  CHECK(format_value(1.5 * TiB, NumberUnit::Bytes) == "1.50 TiB");
  CHECK(format_value(2.42e10, NumberUnit::Flops) == "24.2 GFLOP");
  CHECK(format_value(32768, NumberUnit::Tokens) == "32k");
}

TEST_CASE("memory chart: the context axis runs on past a crossing within half an octave of its end") {
  const double m1 = std::ldexp(1.0, 20), cap = std::ldexp(1.0, 24);
  // gemma-3-27b's crossings (its four variants at 24, 80 and 141 GB): 971,237 is 0.11 octave from 1M, then
  // 1,715,866 is 0.29 octave from 2M; nothing lies within half an octave of 4M.
  const std::vector<double> gemma = {141159,  482956,   855270,   287643,  971237,  1715866,
                                     4682175, 15619675, 27533737, 2078008, 6939119, 12234258};
  CHECK(context_axis_end(gemma, m1, cap) == std::ldexp(1.0, 22));
  // deepseek-v3's: none between 741,455 and 1,048,576 tokens, so the axis keeps its end (1,138,433 stays past it).
  const std::vector<double> deepseek = {4802,   16009,   28216,   76844,  256147,  451460,
                                        614754, 2049180, 3611680, 341530, 1138433, 2006489};
  CHECK(context_axis_end(deepseek, m1, cap) == m1);
  const std::vector<double> at_end = {1000000};
  CHECK(context_axis_end(at_end, m1, m1) == m1);  // no room to grow: the end as given
  CHECK(context_axis_end(at_end, m1, cap) == std::ldexp(1.0, 21));
}

TEST_CASE("bar chart values move past a reference line rather than sit on it") {
  const std::vector<float> one = {120}, two = {120, 150}, edge = {96}, inside = {97};
  CHECK(clear_of_lines(100, 50, one, 4) == 124);
  CHECK(clear_of_lines(100, 50, two, 4) == 154);  // past the first, then past the second it now meets
  CHECK(clear_of_lines(100, 50, edge, 4) == 100);
  CHECK(clear_of_lines(100, 50, inside, 4) == 101);
  CHECK(clear_of_lines(100, 50, {}, 4) == 100);
}

TEST_CASE("chart lines as boxes along them, for labels to keep clear of") {
  const std::vector<float> xs = {0, 12}, ys = {0, 0};
  const std::vector<Box> boxes = polyline_boxes(xs, ys, 1, 6);
  REQUIRE(boxes.size() == 2);
  CHECK((boxes[0].x0 == -1 && boxes[0].y0 == -1 && boxes[0].x1 == 7 && boxes[0].y1 == 1));
  CHECK((boxes[1].x0 == 5 && boxes[1].y0 == -1 && boxes[1].x1 == 13 && boxes[1].y1 == 1));
  const std::vector<float> px = {0, 3, 3}, py = {0, 4, 4};  // 5 long, then a point repeated
  const std::vector<Box> diagonal = polyline_boxes(px, py, 0.5f, 6);
  REQUIRE(diagonal.size() == 2);
  CHECK((diagonal[0].x0 == -0.5f && diagonal[0].y0 == -0.5f && diagonal[0].x1 == 3.5f && diagonal[0].y1 == 4.5f));
}

TEST_CASE("cost chart: a length the page quotes gets a labelled tick, kept before its neighbours") {
  const Axis x{1, std::ldexp(1.0, 20), AxisScale::Log10, NumberUnit::Tokens, ""};
  const std::vector<double> pins = {32768};
  const std::vector<Tick> ticks = with_pinned_ticks(axis_ticks(x, 8), pins, NumberUnit::Tokens);
  CHECK(std::is_sorted(ticks.begin(), ticks.end(), [](const Tick& a, const Tick& b) { return a.value < b.value; }));
  const auto pinned = std::find_if(ticks.begin(), ticks.end(), [](const Tick& t) { return t.value == 32768; });
  REQUIRE(pinned != ticks.end());
  CHECK((pinned->label == "32k" && pinned->major && pinned->pinned));
  CHECK(std::count_if(ticks.begin(), ticks.end(), [](const Tick& t) { return t.value == 32768; }) == 1);
  CHECK(std::count_if(ticks.begin(), ticks.end(), [](const Tick& t) { return t.pinned; }) == 1);
}

TEST_CASE("cost chart: the lengths a lesson page quotes, written L = N or N tokens") {
  const std::string kv_cache_page =
      "Each (query, key) pair costs C_attn = 4 \u00B7 64 heads \u00B7 128 = 32,768 FLOPs per layer. At L = 32,768 "
      "that is about a hundred billion FLOPs.";
  CHECK(quoted_lengths(kv_cache_page, 1, 1048576) == std::vector<double>{32768});
  CHECK(quoted_lengths("fills it after 30,517 tokens; at L = 4096 and 2,048 keys; 244,140 tokens", 1, 1048576) ==
        std::vector<double>{4096, 30517, 244140});
  CHECK(quoted_lengths("at 1,138,433 tokens and 32,768 tokens, L = 32,768", 1, 1048576) ==
        std::vector<double>{32768});  // once each, and only within the axis
  CHECK(quoted_lengths("a fixed k = 2,048 keys; past a few thousand tokens", 1, 1048576).empty());
}

TEST_CASE("memory chart: a crossing is numbered when the page quotes it, exactly or after about") {
  const std::string page =
      "fills 80 GB after 244,140 tokens for one sequence; would cross 80 GB at about 157,500 "
      "tokens; still under 80 GB at 1,048,576 tokens";
  CHECK(text_quotes_number(page, 244140));
  CHECK(text_quotes_number(page, 157510));        // 157,500 at four significant digits
  CHECK(text_quotes_number(page, 157470));        // 157,500 at four, 157,000 at three: rounds up
  CHECK_FALSE(text_quotes_number(page, 157400));  // 157,400 and 157,000: not what the page says
  CHECK_FALSE(text_quotes_number(page, 44140));   // inside 244,140
  CHECK_FALSE(text_quotes_number(page, 48576));   // inside 1,048,576
  CHECK_FALSE(text_quotes_number(page, 1048));    // the start of 1,048,576
  CHECK_FALSE(text_quotes_number("after 244,140 tokens", 157500));
  CHECK_FALSE(text_quotes_number("157,500 tokens", 157510));  // rounded only after "about"
  CHECK_FALSE(text_quotes_number("", 0));
}

TEST_CASE("cost chart: one line under the flat start says it is the projections") {
  // llama-3-70b: 2 x (8192^2 + 2 x 8192 x 1024 + 8192^2) = 301,989,888 FLOPs a layer, over 80 layers.
  CHECK(projection_floor_text(301989888.0 * 80) ==
        "Flat start: the new token's Q, K, V and O projections, 24.2\u00A0GFLOP, the same at every L");
}

TEST_CASE("chart lines lying on each other become a stripe, the first drawn widest, so the layout check finds none") {
  const PixelLine a{{0, 50, 100}, {50, 50, 10}}, b{{0, 50, 100}, {50, 50, 50}}, c{{0, 50, 100}, {50, 50, 50}},
      apart{{0, 100}, {10, 10}};
  const std::vector<PixelLine> lines = {a, b, c, apart};
  const std::vector<std::vector<float>> w = stripe_widths(lines, 2.5f, 4.0f);
  // a lies on b and c only on its first segment; b lies on c all along; c is drawn last; apart meets none.
  CHECK(w == std::vector<std::vector<float>>{{10.5f, 2.5f}, {6.5f, 6.5f}, {2.5f, 2.5f}, {2.5f}});
  std::vector<DrawnStroke> strokes, thin;
  const char* names[] = {"a", "b", "c", "apart"};
  for (std::size_t i = 0; i < lines.size(); ++i)
    for (std::size_t k = 0; k + 1 < lines[i].x.size(); ++k) {
      const DrawnStroke s{names[i],
                          lines[i].x[k],
                          lines[i].y[k],
                          lines[i].x[k + 1],
                          lines[i].y[k + 1],
                          w[i][k],
                          0xFF0000FFu + static_cast<std::uint32_t>(i) * 0x00404000u};
      strokes.push_back(s);
      thin.push_back(s);
      thin.back().width = 2.5f;
    }
  CHECK(hidden_strokes(strokes).empty());
  CHECK(hidden_strokes(thin) ==
        std::vector<std::string>{"a lies under b", "a lies under c", "b lies under c", "b lies under c"});
}
