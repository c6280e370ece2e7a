// The training tasks (core/tasks.h): each batch's sequences have the structure the task promises, the same seed
// gives the same batch, and evaluation draws what training never does.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "core/tasks.h"
#include "core/validate.h"

using namespace attn;

namespace {

Task task(TaskKind kind, int vocab = 64, int seq_len = 32) { return Task{kind, vocab, seq_len, {}}; }

int targets_in(const Sequence& s) {
  int n = 0;
  for (int t : s.targets) n += t != kNoTarget ? 1 : 0;
  return n;
}

// Where a sequence of otherwise distinct symbols repeats: the positions of each token's two occurrences.
std::vector<std::pair<int, int>> duplicate_pairs(const std::vector<int>& ids) {
  std::map<int, int> first;
  std::vector<std::pair<int, int>> pairs;
  for (int p = 0; p < static_cast<int>(ids.size()); ++p) {
    const auto [it, fresh] = first.emplace(ids[static_cast<std::size_t>(p)], p);
    if (!fresh) pairs.emplace_back(it->second, p);
  }
  return pairs;
}

}  // namespace

TEST_CASE("a symbol task's vocabulary: <s>, |, then letters, digits and numbered symbols") {
  CHECK(task_vocab(task(TaskKind::Copy, 6)) == std::vector<std::string>{"<s>", "|", "a", "b", "c", "d"});
  const std::vector<std::string> v = task_vocab(task(TaskKind::Induction, 70));
  REQUIRE(v.size() == 70);
  CHECK(v[27] == "z");
  CHECK(v[28] == "A");
  CHECK(v[54] == "0");
  CHECK(v[63] == "9");
  CHECK(v[64] == "s62");
  CHECK(v[69] == "s67");
}

TEST_CASE("the same seed and batch number give the same batch, another number or seed another") {
  const Task t = task(TaskKind::Induction);
  const std::vector<Sequence> a = task_batch(t, 8, 5, 3), b = task_batch(t, 8, 5, 3);
  REQUIRE(a.size() == 8);
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].ids == b[i].ids);
    CHECK(a[i].targets == b[i].targets);
  }
  CHECK(task_batch(t, 8, 5, 4)[0].ids != a[0].ids);
  CHECK(task_batch(t, 8, 6, 3)[0].ids != a[0].ids);
  CHECK(task_eval_batch(t, 8)[0].ids == task_eval_batch(t, 8)[0].ids);
}

TEST_CASE("induction: a segment of 3 to 8 symbols repeats at 3 to 16 tokens in training and 17 or more in evaluation") {
  const Task t = task(TaskKind::Induction);
  const RepeatRange r = repeat_range(32);
  CHECK(r.min_length == 3);
  CHECK(r.max_length == 8);
  CHECK(r.train_max_distance == 16);
  std::set<int> lengths, train_distances, eval_distances;
  const auto check = [&](const Sequence& s, std::set<int>& distances) {
    REQUIRE(s.ids.size() == 32);
    CHECK(s.ids[0] == 0);  // <s>
    // Distinct symbols but for the repeat: every duplicate is at the same distance, in one run of positions.
    const std::vector<std::pair<int, int>> pairs = duplicate_pairs(s.ids);
    REQUIRE(pairs.size() >= 3);
    const int distance = pairs[0].second - pairs[0].first, length = static_cast<int>(pairs.size());
    for (std::size_t k = 0; k < pairs.size(); ++k) {
      CHECK(pairs[k].second - pairs[k].first == distance);
      CHECK(pairs[k].second == pairs[0].second + static_cast<int>(k));
    }
    // Targets: each token of the repeat but its last predicts the next one; nothing else has a target.
    CHECK(targets_in(s) == length - 1);
    for (int k = 0; k + 1 < length; ++k) {
      const std::size_t p = static_cast<std::size_t>(pairs[0].second + k);
      CHECK(s.targets[p] == s.ids[p + 1]);
      CHECK(s.targets[p] == s.ids[static_cast<std::size_t>(pairs[0].first + k + 1)]);
    }
    lengths.insert(length);
    distances.insert(distance);
  };
  for (const Sequence& s : task_batch(t, 256, 1, 0)) check(s, train_distances);
  for (const Sequence& s : task_eval_batch(t, 256)) check(s, eval_distances);
  CHECK(lengths == std::set<int>{3, 4, 5, 6, 7, 8});
  CHECK(*train_distances.begin() == 3);
  CHECK(*train_distances.rbegin() == 16);
  CHECK(train_distances.size() == 14);
  CHECK(*eval_distances.begin() == 17);
  CHECK(*eval_distances.rbegin() == 28);
}

TEST_CASE("previous_token: every position after the first has the token before it as its target") {
  for (const Sequence& s : task_batch(task(TaskKind::PreviousToken, 10, 12), 16, 2, 0)) {
    REQUIRE(s.ids.size() == 12);
    CHECK(s.ids[0] == 0);
    CHECK(s.targets[0] == kNoTarget);
    for (std::size_t i = 1; i < 12; ++i) {
      CHECK(s.targets[i] == s.ids[i - 1]);
      CHECK(s.ids[i] >= 2);
      CHECK(s.ids[i] < 10);
    }
  }
}

TEST_CASE("copy, reverse and sort: <s> question | answer, the answer predicted token by token") {
  const std::map<TaskKind, std::function<std::vector<int>(std::vector<int>)>> answer{
      {TaskKind::Copy, [](std::vector<int> q) { return q; }},
      {TaskKind::Reverse, [](std::vector<int> q) { return std::vector<int>(q.rbegin(), q.rend()); }},
      {TaskKind::Sort,
       [](std::vector<int> q) {
         std::sort(q.begin(), q.end());
         return q;
       }},
  };
  for (const auto& entry : answer) {
    const TaskKind kind = entry.first;
    const auto& expected = entry.second;
    const std::string_view name = to_string(kind);
    CAPTURE(name);
    for (const Sequence& s : task_batch(task(kind, 8, 13), 16, 3, 1)) {
      REQUIRE(s.ids.size() == 12);  // (13 - 2) / 2 = 5 symbols each side
      CHECK(s.ids[0] == 0);
      CHECK(s.ids[6] == 1);  // |
      const std::vector<int> question(s.ids.begin() + 1, s.ids.begin() + 6);
      CHECK(std::vector<int>(s.ids.begin() + 7, s.ids.end()) == expected(question));
      CHECK(std::vector<int>(s.targets.begin() + 6, s.targets.begin() + 11) == expected(question));
      CHECK(targets_in(s) == 5);
    }
  }
}

TEST_CASE("text: windows of characters, each predicting the next, evaluation reading only the last tenth") {
  std::string text;
  for (int i = 0; i < 40; ++i) text += "ab cd\n";  // 240 characters
  Task t{TaskKind::Text, 0, 12, text};
  CHECK(task_vocab(t) == std::vector<std::string>{"a", "b", "c", "d", "\u21b5", "\u2423"});
  const auto label = [&](int id) { return task_vocab(t)[static_cast<std::size_t>(id)]; };
  for (const Sequence& s : task_batch(t, 32, 4, 0)) {
    REQUIRE(s.ids.size() == 12);
    for (std::size_t i = 0; i + 1 < 12; ++i) CHECK(s.targets[i] == s.ids[i + 1]);
    // The text repeats every 6 characters: what follows "d" is always the newline.
    for (std::size_t i = 0; i < 12; ++i)
      if (label(s.ids[i]) == "d") CHECK(label(s.targets[i]) == "\u21b5");
  }
  // 240 characters: training windows end (targets included) before character 216, evaluation starts at or after it.
  // Here every window of the repeating text looks alike, so the test reads the split from a text that does not.
  std::string marked(216, 'x');
  marked += std::string(24, 'y');
  Task m{TaskKind::Text, 0, 12, marked};
  for (const Sequence& s : task_batch(m, 64, 1, 0))
    for (std::size_t i = 0; i < 12; ++i) CHECK(s.targets[i] == 0);  // only x
  for (const Sequence& s : task_eval_batch(m, 64))
    for (std::size_t i = 0; i < 12; ++i) CHECK(s.ids[i] == 1);  // only y
  CHECK_THROWS_WITH_AS(check_task(Task{TaskKind::Text, 0, 32, text}),
                       "text: has 240 characters; sequences of 32 need at least 330, so that its last tenth holds a "
                       "whole evaluation window",
                       InputError);
}

TEST_CASE("the probe batch: distinct symbols but for one repeat at a distance training never draws") {
  const ProbeBatch p = probe_batch(task(TaskKind::Copy), 16);
  REQUIRE(p.ids.size() == 16);
  REQUIRE(p.repeats.size() == 16);
  for (std::size_t b = 0; b < 16; ++b) {
    const Repeat& r = p.repeats[b];
    CHECK(r.second - r.first > 16);
    const std::vector<std::pair<int, int>> pairs = duplicate_pairs(p.ids[b]);
    REQUIRE(static_cast<int>(pairs.size()) == r.length);
    for (int k = 0; k < r.length; ++k) {
      CHECK(pairs[static_cast<std::size_t>(k)].first == r.first + k);
      CHECK(pairs[static_cast<std::size_t>(k)].second == r.second + k);
    }
  }
}

TEST_CASE("tasks refuse what they cannot draw, naming the field") {
  CHECK_THROWS_WITH_AS(check_task(task(TaskKind::Induction, 64, 11)), "seq_len: must be >= 12 (found 11)", InputError);
  CHECK_THROWS_WITH_AS(check_task(task(TaskKind::Sort, 3)), "vocab: must be >= 4 (found 3)", InputError);
  CHECK(parse_task("previous_token") == TaskKind::PreviousToken);
  CHECK_FALSE(parse_task("Induction").has_value());
}
