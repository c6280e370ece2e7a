// The characters the fonts must hold (ui/logic/glyph_set).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <imgui.h>

#include "headless_frame.h"
#include "helpers.h"
#include "ui/logic/app_state.h"
#include "ui/logic/glyph_set.h"
#include "ui/widgets/heatmap.h"
#include "ui/widgets/theme.h"

using namespace attn;
using namespace attn::ui;
using namespace attn::test;

TEST_CASE("the fonts are given every character the document writes beyond ASCII, malformed UTF-8 as U+FFFD") {
  CHECK(characters_beyond_ascii({"the cat"}).empty());
  CHECK(characters_beyond_ascii({"caf\u00E9", "\u732B", "\xF0\x9F\x90\x88", "\u732B\u00E9"}) ==
        std::u32string{U'\u00E9', U'\u732B', U'\U0001F408'});
  CHECK(characters_beyond_ascii({"a\xFFz", "\xE7\x8C"}) ==
        std::u32string{U'\uFFFD'});  // a stray byte, a cut-off character
  AppState state(load_scenario_file(std::string(ATTN_TEST_DATA_DIR) + "/unicode_tokens.json"), {});
  CHECK(characters_in_use(state) == std::u32string{U'\u00E9', U'\u732B', U'\U0001F408'});
  state.edit([](Scenario& s) { s.input.tokens[0] = "\u306D\u3053"; });  // typed in Japanese: ねこ
  CHECK(characters_in_use(state) ==
        std::u32string{U'\u00E9', U'\u3053', U'\u306D', U'\u732B', U'\U0001F408'});  // 猫 stays: the name has it
}

namespace {

// The code points a line's string literals write: UTF-8 and \uXXXX escapes, outside // comments.
void literal_characters(const std::string& line, std::u32string& out) {
  bool in_string = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (!in_string) {
      if (c == '/' && i + 1 < line.size() && line[i + 1] == '/') return;
      if (c == '\'' && i + 2 < line.size() && line[i + 2] == '\'') i += 2;  // '"'
      else if (c == '"') in_string = true;
      continue;
    }
    if (c == '\\' && i + 5 < line.size() && line[i + 1] == 'u') {
      out.push_back(static_cast<char32_t>(std::stoul(line.substr(i + 2, 4), nullptr, 16)));
      i += 5;
    } else if (c == '\\') {
      ++i;
    } else if (c == '"') {
      in_string = false;
    } else if (static_cast<unsigned char>(c) >= 0x80) {
      const std::u32string one = characters_beyond_ascii({std::string_view(line).substr(i, 4)});
      out.push_back(one.front());
      while (i + 1 < line.size() && (static_cast<unsigned char>(line[i + 1]) & 0xC0) == 0x80) ++i;
    }
  }
}

// The atlas ImGui makes, without a window: its pixels and the fonts' enlargement.
struct BuiltAtlas {
  std::int64_t pixels;
  float scale;
};
BuiltAtlas build_atlas(float zoom, const std::u32string& extra) {
  ImGui::CreateContext();
  load_fonts(zoom, extra);
  const ImFontAtlas& atlas = *ImGui::GetIO().Fonts;
  const BuiltAtlas built{std::int64_t(atlas.TexWidth) * atlas.TexHeight, atlas.Fonts[0]->Scale};
  ImGui::DestroyContext();
  return built;
}

std::u32string chinese(char32_t first, int count) {
  std::u32string s;
  for (int i = 0; i < count; ++i) s.push_back(first + char32_t(i));
  return s;
}

}  // namespace

TEST_CASE("every string the window's code writes is in the fonts' interface characters") {
  std::string missing;  // "ui/x.cpp U+2714 ..."
  for (const char* folder : {"ui", "app", "core"})
    for (const auto& entry :
         std::filesystem::recursive_directory_iterator(std::string(ATTN_SOURCE_DIR) + "/" + folder)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".cpp" && ext != ".h") continue;
      std::ifstream in(entry.path());
      std::u32string written;
      for (std::string line; std::getline(in, line);) literal_characters(line, written);
      for (const char32_t c : written) {
        // The C1 control the escaping of terminal text names, Chinese the tokens' own example, what the handout
        // writes for LaTeX: not drawn by the window's fonts.
        if (c < 0xA0 || (c >= 0x2E80 && c != 0xFFFD)) continue;
        if (!std::binary_search(interface_characters().begin(), interface_characters().end(), c)) {
          char code[16];
          std::snprintf(code, sizeof code, " U+%04X ", unsigned(c));
          missing += entry.path().lexically_relative(ATTN_SOURCE_DIR).string() + code;
        }
      }
    }
  CHECK(missing == "");
  CHECK(interface_characters().size() == 95 + 96 + 25 + 25 + 24 + 11 + 45 + 10 + 24);
}

TEST_CASE("the fonts' atlas is bounded whatever the zoom and the document's characters") {
  const std::u32string none;
  CHECK(font_raster_zoom(font_characters(none), 1.0f) == 1.0f);
  CHECK(font_raster_zoom(font_characters(none), 3.0f) == 3.0f);  // the projector at 300%: rasterised as drawn
  for (const auto& [zoom_, extra] : std::vector<std::pair<float, std::u32string>>{{1.0f, none},
                                                                                  {3.3f, none},
                                                                                  {7.5f, none},
                                                                                  {1.0f, chinese(0x4E00, 3000)},
                                                                                  {3.3f, chinese(0x4E00, 3000)},
                                                                                  {0.75f, chinese(0x4E00, 20000)}}) {
    const float zoom = zoom_;  // CAPTURE is a lambda: not a structured binding (Clang 14)
    const std::size_t count = extra.size();
    CAPTURE(zoom);
    CAPTURE(count);
    const std::u32string characters = font_characters(extra);
    const float raster = font_raster_zoom(characters, zoom);
    CHECK(raster <= zoom);
    CHECK(font_atlas_bytes(characters, raster) <= kFontAtlasBytes);
    if (raster < zoom) CHECK(font_atlas_bytes(characters, raster + 0.05f) > kFontAtlasBytes);
    const BuiltAtlas built = build_atlas(zoom, extra);
    CHECK(built.pixels <= font_atlas_pixels(characters, raster));  // the estimate bounds what ImGui packs
    CHECK(built.pixels * 10 <= kFontAtlasBytes);
    CHECK(built.scale == doctest::Approx(zoom / raster));
  }
  // Presentation at 300% on a large screen is drawn enlarged; so is a document of 3,000 Chinese characters at 330%.
  CHECK(font_raster_zoom(font_characters(none), 7.5f) < 7.5f);
  CHECK(font_raster_zoom(font_characters(chinese(0x4E00, 3000)), 3.3f) < 3.3f);
}

TEST_CASE("in presentation mode a matrix's digits stand at least 16 px tall, in normal mode as the body's") {
  const auto digit_height = [](bool presentation) {
    ImGui::CreateContext();
    load_fonts(1.0f, {}, presentation);
    unsigned char* pixels = nullptr;
    int w = 0, h = 0;
    ImGui::GetIO().Fonts->GetTexDataAsAlpha8(&pixels, &w, &h);
    // The rows of the "0" in the atlas that are at least half covered: the digit's height as a reader sees it (the
    // glyph's box is rounded outwards, and ImGui's size is the font's line height, ascent to descent, not its em).
    const ImFontGlyph* zero = cell_font()->FindGlyph('0');
    int rows = 0;
    if (zero)
      for (int y = static_cast<int>(zero->V0 * h); y < static_cast<int>(std::lround(zero->V1 * h)); ++y) {
        bool inked = false;
        for (int x = static_cast<int>(zero->U0 * w); x < static_cast<int>(std::lround(zero->U1 * w)); ++x)
          inked = inked || pixels[y * w + x] >= 128;
        rows += inked;
      }
    const float height = static_cast<float>(rows) * cell_font()->Scale;
    const bool own_font = cell_font() != ImGui::GetIO().Fonts->Fonts[0];
    ImGui::DestroyContext();
    return std::pair{height, own_font};
  };
  // DejaVu Sans's digits are 0.729 of its em, and its em 0.859 of the line height ImGui sizes it by: 16.3 px at
  // 26 px, 11.3 at the body's 18.
  CHECK(digit_height(true).first >= 16.0f);
  CHECK(digit_height(true).second);
  CHECK(digit_height(false).first == 11.0f);
}

TEST_CASE("a matrix's row label is shortened by width too: wide letters never take the matrix's room") {
  BeginHeadlessFrame();
  const std::vector<std::string> labels = {std::string(256, 'W'), "cat", std::string(30, 'i')};
  const std::string wide = HeatmapLabel(&labels, 0);
  CHECK(wide.ends_with("\u2026"));
  CHECK(ImGui::CalcTextSize(wide.c_str()).x <= kMaxLabelEms * kBodyPixels);
  CHECK(ImGui::CalcTextSize((wide.substr(0, wide.size() - 3) + "W\u2026").c_str()).x > kMaxLabelEms * kBodyPixels);
  CHECK(HeatmapLabel(&labels, 1) == "cat");
  CHECK(HeatmapLabel(&labels, 2) == std::string(23, 'i') + "\u2026");  // 24 columns, as text tables
  CHECK(HeatmapLabel(nullptr, 7) == "7");
  EndHeadlessFrame();
}
