#include "ui/widgets/style.h"

namespace attn::ui {

Style& GetStyle() {
  static Style style;
  return style;
}

}  // namespace attn::ui
