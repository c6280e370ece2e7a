#pragma once
// What a lesson page on the Real model view says about the run on screen: the heads ranked by a score (the same list
// the view's "Knock out the top k" takes), the loss on a text's repeat, and the page's live line built from them, so
// the page quotes the model the class opened rather than numbers typed into the lesson.
#include <string>
#include <vector>

#include "core/ablation.h"
#include "core/head_roles.h"
#include "core/model.h"
#include "ui/logic/lessons.h"
#include "ui/logic/real_model.h"
#include "ui/logic/tradeoff.h"

namespace attn::ui {

struct RankedHead {
  double score = 0;
  HeadRef head;
};
// Every head that has the score on the trace's text, highest first (ties in layer and head order).
std::vector<RankedHead> heads_by_score(const ModelTrace& trace, HeadRole role);

// The positions i whose next token an earlier copy gives away: token i appeared before at j, followed there by the
// token that follows i now (ids[j] == ids[i], ids[j + 1] == ids[i + 1], j < i). Their losses are "the loss on the
// repeat": what induction heads lower.
std::vector<int> repeat_positions(const std::vector<int>& ids);
// The mean of losses at those positions (or, with `others`, at every other position); nullopt when there are none.
std::optional<double> mean_loss_at(const std::vector<double>& losses, const std::vector<int>& positions, bool others);

// The loss bars' caption: the mean loss in nats on the repeat and elsewhere (over every position where the text has no
// repeat), knocked out against as trained when heads are out, and what the dashed line is (ln V, a uniform guess).
std::string loss_caption(const RealModelRun& r);

// The page's live line, from the run shown: with no model open, how to get one; while the page's run is computed,
// where it is; then the strongest head by the page's score and, on a page about induction or knocking heads out, the
// loss on the repeat (as trained, and with the heads knocked out). Empty for a page with nothing to say.
std::string real_page_line(const RealModelDocument& doc, const LessonPage& page);
// The measuring page's live line: how to get a model, where the measurement is, then what the cheapest GQA (mqa)
// keeps of the cache and adds to the loss, beside the MLA with the most cache not above it.
std::string measure_page_line(const RealModelDocument& doc, const TradeoffDocument& measured);

}  // namespace attn::ui
