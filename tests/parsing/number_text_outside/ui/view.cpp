// A view that writes two numbers itself (lines 8 and 10), and four things the check must let pass.
#include <cstdio>

#include <imgui.h>

void View(double share, double& rate, int page) {
  char text[32];
  std::snprintf(text, sizeof text, "%d", page);
  // A comment may quote a format: "%.2f", and snprintf( too.
  ImGui::Text("%.1f%% of the cache", 100 * share);
  ImGui::InputDouble("rate", &rate, 0.0, 0.0, "%.4g");
  ImGui::Text("page %d, 100%% of \"it\"", page);
}
