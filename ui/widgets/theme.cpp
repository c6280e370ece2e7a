#include "ui/widgets/theme.h"

#include "ui/widgets/style.h"

#include "ui/logic/colour_map.h"
#include "ui/logic/glyph_set.h"

#include <algorithm>
#include <filesystem>

namespace attn::ui {
namespace {

ImFont* g_title = nullptr;  // owned by the ImGui font atlas
ImFont* g_cell = nullptr;

constexpr const char* kFontDirs[] = {"/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/dejavu",
                                     "/usr/local/share/fonts/dejavu"};

std::filesystem::path find_font(const char* file) {
  for (const char* dir : kFontDirs) {
    std::filesystem::path p = std::filesystem::path(dir) / file;
    std::error_code ec;
    if (std::filesystem::exists(p, ec)) return p;
  }
  return {};
}

// The code points as ImGui's ranges (ImWchar is 16 bits here: beyond U+FFFF ImGui itself draws the replacement
// mark).
const ImWchar* glyph_ranges(const std::u32string& characters) {
  static ImVector<ImWchar> ranges;  // read when the atlas is built, after this returns
  ImFontGlyphRangesBuilder b;
  for (const char32_t c : characters)
    if (c <= 0xFFFF) b.AddChar(static_cast<ImWchar>(c));
  ranges.clear();
  b.BuildRanges(&ranges);
  return ranges.Data;
}

// Where Debian puts WenQuanYi Micro Hei (fonts-wqy-microhei).
std::filesystem::path cjk_font() {
  for (const char* f :
       {"/usr/share/fonts/truetype/wqy/wqy-microhei.ttc", "/usr/share/fonts/wqy-microhei/wqy-microhei.ttc"}) {
    std::error_code ec;
    if (std::filesystem::exists(f, ec)) return f;
  }
  return {};
}

// One font of `size` with the fallback font's glyphs merged in for what it lacks (whole squares, not oversampled:
// see font_atlas_pixels).
ImFont* add_font(const std::filesystem::path& file, float size, const ImWchar* ranges,
                 const std::filesystem::path& fallback) {
  ImGuiIO& io = ImGui::GetIO();
  ImFontConfig own;
  own.OversampleH = font_oversample(size);
  ImFont* font = io.Fonts->AddFontFromFileTTF(file.c_str(), size, &own, ranges);
  if (!fallback.empty()) {
    ImFontConfig merge;
    merge.OversampleH = 1;
    merge.MergeMode = true;  // glyphs the first font has are kept
    io.Fonts->AddFontFromFileTTF(fallback.c_str(), size, &merge, ranges);
  }
  return font;
}

// The palettes' hues as dark or light as the page needs for text in them to read at 4.5:1 (lines then read at
// more than their 3:1): Okabe-Ito's yellow, sky blue and grey vanish on a white page, its blue on a black one.
void legible_palettes(ImVec4 page_colour) {
  const Style base;
  Style& s = GetStyle();
  const Rgb page{page_colour.x, page_colour.y, page_colour.z};
  // A table's striped rows (the Memory view's) are a shade off the page: a colour must read on each.
  const ImVec4 stripe = ImGui::GetStyle().Colors[ImGuiCol_TableRowBgAlt];
  const Rgb row{page.r + (stripe.x - page.r) * stripe.w, page.g + (stripe.y - page.g) * stripe.w,
                page.b + (stripe.z - page.b) * stripe.w};
  // ... and a selected row (the Memory view's current model) is tinted once more.
  const ImVec4 tint = ImGui::GetStyle().Colors[ImGuiCol_Header];
  const Rgb selected{row.r + (tint.x - row.r) * tint.w, row.g + (tint.y - row.g) * tint.w,
                     row.b + (tint.z - row.b) * tint.w};
  const auto legible = [&](ImU32 c) {
    const ImVec4 v = ImGui::ColorConvertU32ToFloat4(c);
    return pack(legible_on(legible_on(legible_on({v.x, v.y, v.z}, page, 4.5), row, 4.5), selected, 4.5));
  };
  for (std::size_t i = 0; i < s.okabe_ito.size(); ++i) s.okabe_ito[i] = legible(base.okabe_ito[i]);
  for (std::size_t i = 0; i < s.tableau.size(); ++i) s.tableau[i] = legible(base.tableau[i]);
}

}  // namespace

ImU32 accent_colour() { return GetStyle().accent; }

bool light_page() {
  const ImVec4 bg = ImGui::GetStyleColorVec4(ImGuiCol_WindowBg);
  return 0.2126f * bg.x + 0.7152f * bg.y + 0.0722f * bg.z > 0.5f;
}

// Okabe-Ito without the hues of the accent (amber on dark, a deep orange on light): the followed head is framed in
// it, and KV head 0 in orange beside it left no way to tell which head was followed. The strongest on the page's
// background first: on black dark blue is the faintest, on white sky blue and grey are.
ImU32 kv_head_colour(int kv_head) {
  const auto& palette = GetStyle().okabe_ito;
  constexpr std::array<std::size_t, 6> kOnDark = {1, 2, 5, 6, 7, 4}, kOnLight = {4, 2, 6, 1, 7, 5};
  const auto& order = light_page() ? kOnLight : kOnDark;
  return palette[order[static_cast<std::size_t>(kv_head) % order.size()]];
}

ImU32 preset_colour(std::size_t preset) {
  const auto& palette = GetStyle().tableau;
  return palette[preset % palette.size()];
}

ImU32 variant_colour(int variant_index) {
  const Style& s = GetStyle();
  return s.tableau[static_cast<std::size_t>(s.variant_hues[static_cast<std::size_t>(std::clamp(variant_index, 0, 3))])];
}

bool load_fonts(float zoom, const std::u32string& extra, bool presentation) {
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  io.Fonts->Flags |= ImFontAtlasFlags_NoPowerOfTwoHeight;  // up to half the atlas saved
  g_title = g_cell = nullptr;
  const std::u32string characters = font_characters(extra);
  const float raster = font_raster_zoom(characters, zoom);
  const std::filesystem::path sans = find_font("DejaVuSans.ttf");
  const std::filesystem::path bold = find_font("DejaVuSans-Bold.ttf");
  if (sans.empty()) {
    ImFontConfig c;
    c.SizePixels = kBodyPixels * raster;
    io.Fonts->AddFontDefault(&c);
  } else {
    const ImWchar* ranges = glyph_ranges(characters);
    // The CJK font is only opened when something beyond DejaVu's own ranges is written.
    const bool beyond =
        std::any_of(extra.begin(), extra.end(), [](char32_t c) { return c >= 0x2E80 && c <= 0xFFFF && c != 0xFFFD; });
    const std::filesystem::path fallback = beyond ? cjk_font() : std::filesystem::path();
    add_font(sans, kBodyPixels * raster, ranges, fallback);
    g_title = add_font(bold.empty() ? sans : bold, kTitlePixels * raster, ranges, fallback);
    static const ImWchar cell_ranges[] = {0x20, 0x7E, 0x2026, 0x2026, 0};  // what format_cell writes
    g_cell = add_font(sans, cell_font_pixels(zoom, presentation) * raster / zoom, cell_ranges, {});
  }
  io.Fonts->Build();
  for (ImFont* font : io.Fonts->Fonts) font->Scale = zoom / raster;  // drawn enlarged past the atlas's allowance
  return !sans.empty();
}

ImFont* title_font() { return g_title ? g_title : ImGui::GetIO().Fonts->Fonts[0]; }
ImFont* cell_font() { return g_cell ? g_cell : ImGui::GetIO().Fonts->Fonts[0]; }
float font_size(const ImFont* font) { return font->FontSize * font->Scale; }
float title_font_size() { return font_size(title_font()); }
float cell_font_size() { return font_size(cell_font()); }

void apply_style(StyleTheme theme, bool high_contrast, float scale) {
  ImGuiStyle& s = ImGui::GetStyle();
  s = ImGuiStyle();
  if (theme == StyleTheme::Light) ImGui::StyleColorsLight();
  else ImGui::StyleColorsDark();
  s.WindowRounding = 4.0f;
  s.FrameRounding = 3.0f;
  s.WindowPadding = {10, 8};
  s.FramePadding = {6, 4};
  s.ItemSpacing = {8, 6};
  s.ScrollbarSize = 16;
  if (theme == StyleTheme::Dark) {
    s.Colors[ImGuiCol_WindowBg] = {0.11f, 0.115f, 0.13f, 1.0f};
    s.Colors[ImGuiCol_Text] = {0.94f, 0.94f, 0.95f, 1.0f};
    s.Colors[ImGuiCol_TextDisabled] = {0.66f, 0.67f, 0.70f, 1.0f};
  } else {
    s.Colors[ImGuiCol_WindowBg] = {0.97f, 0.97f, 0.96f, 1.0f};
    s.Colors[ImGuiCol_Text] = {0.08f, 0.08f, 0.10f, 1.0f};
    s.Colors[ImGuiCol_TextDisabled] = {0.35f, 0.36f, 0.40f, 1.0f};
    // Fields, radio buttons and check boxes: grey with an edge, not white on a white page.
    s.Colors[ImGuiCol_FrameBg] = {0.86f, 0.87f, 0.89f, 1.0f};
    s.Colors[ImGuiCol_Border] = {0.55f, 0.56f, 0.60f, 1.0f};
    s.FrameBorderSize = 1.0f;
  }
  if (high_contrast) {
    const bool dark = theme == StyleTheme::Dark;
    s.Colors[ImGuiCol_WindowBg] = dark ? ImVec4{0, 0, 0, 1} : ImVec4{1, 1, 1, 1};
    s.Colors[ImGuiCol_Text] = dark ? ImVec4{1, 1, 1, 1} : ImVec4{0, 0, 0, 1};
    s.Colors[ImGuiCol_TextDisabled] = dark ? ImVec4{0.82f, 0.82f, 0.85f, 1} : ImVec4{0.2f, 0.2f, 0.22f, 1};
    s.Colors[ImGuiCol_Border] = dark ? ImVec4{0.7f, 0.7f, 0.7f, 1} : ImVec4{0.2f, 0.2f, 0.2f, 1};
    // Check boxes and fields stand out from the black (or white) page, with an edge.
    s.Colors[ImGuiCol_FrameBg] = dark ? ImVec4{0.26f, 0.29f, 0.36f, 1} : ImVec4{0.84f, 0.85f, 0.88f, 1};
    s.FrameBorderSize = 1.0f;
  }
  // The panels tile the window: which one has the keyboard is no news, and a lit title ("Heads" in blue, nothing
  // pointed at) reads as a selection. A prompt or dialog is modal: the one with the keyboard is plain anyway.
  s.Colors[ImGuiCol_TitleBgActive] = s.Colors[ImGuiCol_TitleBg];
  // Text in these colours reads at 4.5:1 or more on its page, measured by the layout check: a projector washes out
  // the rest (amber, light green and ImGui's mid blue behind white text).
  const bool light = theme == StyleTheme::Light;
  GetStyle().accent = light ? IM_COL32(160, 75, 0, 255) : IM_COL32(255, 190, 40, 255);
  GetStyle().agree = light ? IM_COL32(30, 123, 30, 255) : IM_COL32(115, 217, 115, 255);
  GetStyle().disagree = light ? IM_COL32(190, 30, 20, 255) : IM_COL32(255, 102, 89, 255);
  GetStyle().matrix_frame = light ? IM_COL32(128, 130, 138, 255) : IM_COL32(120, 122, 130, 255);
  if (light) {
    // The current view's tab: its accent text on the menu bar's tinted selection.
    s.Colors[ImGuiCol_MenuBarBg] = {0.93f, 0.93f, 0.93f, 1.0f};
    s.Colors[ImGuiCol_Header] = {0.26f, 0.59f, 0.98f, 0.12f};
  } else {
    s.Colors[ImGuiCol_SliderGrab] = {0.16f, 0.37f, 0.66f, 1.0f};  // under a slider's value
    s.Colors[ImGuiCol_SliderGrabActive] = {0.20f, 0.42f, 0.75f, 1.0f};
  }
  legible_palettes(s.Colors[ImGuiCol_WindowBg]);
  s.ScaleAllSizes(scale);
}

}  // namespace attn::ui
