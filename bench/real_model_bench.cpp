// real-model-bench: the window's real-model document (ui/logic/real_model.h) on a Hugging Face model folder, timed
// the way a person meets it: from an edit of the text (or an ablation toggled) to the frame whose poll() shows that
// edit's result. Beside it, in the same run, bench/checkpoint_bench.py's PyTorch side (float64, the same folder and
// text, a process per run) and optionally `attention-lab run FOLDER --text TEXT`; then where the time goes (the
// forward pass's parts timed one by one on this thread). docs/PERFORMANCE.md says how to run it and what it found.
//
//   real-model-bench FOLDER [--tokens 32,128] [--runs 7] [--head 5.1] [--peer-runs 5] [--peer SCRIPT | --no-peer]
//                    [--cli BINARY] [--heap window|default] [--no-phases] [--json FILE]
//
// Texts are ASCII: on checkpoint_bench.py's folders (a byte-level tokenizer without merges) N characters are N tokens;
// the program checks that the shown run has N tokens and stops otherwise.
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "core/io/checkpoint_model.h"
#include "core/io/checkpoint_text.h"
#include "core/memory_budget.h"
#include "core/model.h"
#include "core/product.h"
#include "ui/logic/model_document.h"
#include "ui/logic/real_model.h"

namespace {

using attn::Ablation;
using attn::HeadRef;
using attn::ui::RealModelDocument;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024.0;
}

// CPU time the rest of the machine used while we ran (bench/compare.py's measure): /proc/stat's busy time minus ours
// and our children's. Timings taken while another process used a good part of a core mean little.
class OtherLoad {
 public:
  OtherLoad() : start_(sample()) {}
  std::string report() const {
    const Sample now = sample();
    const double wall = std::chrono::duration<double>(now.when - start_.when).count();
    const double other = std::max(0.0, (now.busy - start_.busy) - (now.own - start_.own));
    char buf[160];
    std::snprintf(buf, sizeof buf, "%.1f s of CPU by other processes in %.0f s (%.0f%% of one core), %.1f s stolen",
                  other, wall, 100 * other / wall, now.steal - start_.steal);
    return buf;
  }

 private:
  struct Sample {
    double busy = 0, steal = 0, own = 0;
    Clock::time_point when;
  };
  static Sample sample() {
    Sample s;
    s.when = Clock::now();
    std::ifstream f("/proc/stat");
    std::string cpu;
    std::array<double, 8> v{};
    f >> cpu;
    for (double& x : v) f >> x;
    const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
    s.busy = (v[0] + v[1] + v[2] + v[5] + v[6]) / hz;  // user, nice, system, irq, softirq
    s.steal = v[7] / hz;
    rusage self{}, children{};
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    auto secs = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
    s.own = secs(self.ru_utime) + secs(self.ru_stime) + secs(children.ru_utime) + secs(children.ru_stime);
    return s;
  }
  Sample start_;
};

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double p90(std::vector<double> v) {  // nearest rank: of 7 values, the largest
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(v.size())));
  return v[std::max<std::size_t>(rank, 1) - 1];
}

// Two different texts of n ASCII characters: sentences with a letter changed in the middle, so that A and B alternate
// as a person's typing would change the text.
std::array<std::string, 2> texts_of(int n) {
  static const std::string kProse =
      "The quick brown fox jumps over the lazy dog, and the cat sat up. A stitch in time saves nine; "
      "all that glitters is not gold, and still waters run deep. ";
  std::string a;
  while (static_cast<int>(a.size()) < n) a += kProse;
  a.resize(static_cast<std::size_t>(n));
  std::string b = a;
  char& c = b[static_cast<std::size_t>(n / 2)];
  c = c == 'x' ? 'y' : 'x';
  return {a, b};
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs a shell command; its standard output, or throws with its exit status.
std::string run_command(const std::string& command) {
  FILE* p = popen(command.c_str(), "r");
  if (!p) throw std::runtime_error("could not run: " + command);
  std::string out;
  std::array<char, 4096> buf{};
  std::size_t got = 0;
  while ((got = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), got);
  const int status = pclose(p);
  if (status != 0) throw std::runtime_error("exit status " + std::to_string(status) + " from: " + command);
  return out;
}

struct Args {
  std::filesystem::path folder;
  std::vector<int> tokens{32, 128};
  int runs = 7;
  HeadRef head{5, 1};
  int peer_runs = 5;
  std::filesystem::path peer = std::filesystem::path(ATTN_SOURCE_DIR) / "bench" / "checkpoint_bench.py";
  bool no_peer = false;
  std::filesystem::path cli;
  bool phases = true;
  std::string heap = "window";
  std::filesystem::path json;
};

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "real-model-bench: " << why << "\n"
            << "usage: real-model-bench FOLDER [--tokens 32,128] [--runs 7] [--head 5.1] [--peer-runs 5]\n"
            << "                        [--peer bench/checkpoint_bench.py | --no-peer] [--cli attention-lab]\n"
            << "                        [--heap window|default] [--no-phases] [--json FILE]\n";
  std::exit(2);
}

int positive(const std::string& s, const std::string& option, int least = 1) {
  try {
    std::size_t used = 0;
    const int v = std::stoi(s, &used);
    if (used == s.size() && v >= least) return v;
  } catch (const std::exception&) {
  }
  usage(option + ": a whole number from " + std::to_string(least) + " expected, not '" + s + "'");
}

Args parse_args(int argc, char** argv) {
  Args a;
  std::vector<std::string> v(argv + 1, argv + argc);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string& o = v[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= v.size()) usage(o + " needs a value");
      return v[++i];
    };
    if (o == "--tokens") {
      a.tokens.clear();
      std::stringstream list(value());
      for (std::string item; std::getline(list, item, ',');) a.tokens.push_back(positive(item, o));
    } else if (o == "--runs") {
      a.runs = positive(value(), o);
    } else if (o == "--head") {
      const std::string& h = value();
      const auto dot = h.find('.');
      if (dot == std::string::npos) usage("--head: layer.head expected, as 5.1");
      a.head = {positive(h.substr(0, dot), o, 0), positive(h.substr(dot + 1), o, 0)};
    } else if (o == "--peer-runs") {
      a.peer_runs = positive(value(), o);
    } else if (o == "--peer") {
      a.peer = value();
    } else if (o == "--no-peer") {
      a.no_peer = true;
    } else if (o == "--cli") {
      a.cli = value();
    } else if (o == "--heap") {
      const std::string& h = value();
      if (h != "window" && h != "default") usage("--heap: window or default");
      a.heap = h;
    } else if (o == "--no-phases") {
      a.phases = false;
    } else if (o == "--json") {
      a.json = value();
    } else if (!o.empty() && o[0] == '-') {
      usage("unknown option " + o);
    } else if (a.folder.empty()) {
      a.folder = o;
    } else {
      usage("one model folder expected");
    }
  }
  if (a.folder.empty())
    usage("a model folder is needed (bench/checkpoint_bench.py --peer-only --only gpt2 writes one)");
  return a;
}

// ----------------------------------------------------------------------------------------------------------------
// The document: an edit to its result shown
// ----------------------------------------------------------------------------------------------------------------

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

struct Sample {
  double wall = 0;    // the edit to the poll() that shows its result
  double worker = 0;  // RealModelRun::seconds: the forward pass(es) on the worker
  double faults = 0;  // minor page faults of the process meanwhile (memory the heap took fresh from the kernel)
};

struct Series {
  std::vector<Sample> samples;
  std::vector<double> walls() const {
    std::vector<double> v;
    for (const Sample& s : samples) v.push_back(s.wall);
    return v;
  }
  std::vector<double> workers() const {
    std::vector<double> v;
    for (const Sample& s : samples) v.push_back(s.worker);
    return v;
  }
  std::vector<double> faults() const {
    std::vector<double> v;
    for (const Sample& s : samples) v.push_back(s.faults);
    return v;
  }
};

class Driver {
 public:
  explicit Driver(RealModelDocument& doc) : doc_(doc) {}

  // open() and the first result shown.
  double open(const std::filesystem::path& folder, const std::string& text) {
    const auto start = Clock::now();
    doc_.open(folder, text);
    ++ticket_;
    settle();
    return since(start);
  }
  Sample text(const std::string& t) {
    const long faults = minor_faults();
    const auto start = Clock::now();
    doc_.set_text(t);
    ++ticket_;
    return finish(start, faults);
  }
  Sample ablation(const Ablation& a) {
    const long faults = minor_faults();
    const auto start = Clock::now();
    doc_.set_ablation(a);
    ++ticket_;
    return finish(start, faults);
  }

 private:
  Sample finish(Clock::time_point start, long faults) {
    settle();
    const double wall = since(start);
    return {wall, doc_.shown().seconds, static_cast<double>(minor_faults() - faults)};
  }
  // Polls as a frame would (every 0.5 ms rather than every 16.7 ms: the frame's own wait is not the document's)
  // until the newest edit's result is shown; a failure stops the program.
  void settle() {
    for (;;) {
      std::optional<std::string> failure;
      doc_.poll(failure);
      if (failure) throw std::runtime_error("the document could not compute the edit: " + *failure);
      if (doc_.shown().ticket == ticket_) return;
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
  }
  RealModelDocument& doc_;
  std::uint64_t ticket_ = 0;
};

void check_shown(const RealModelDocument& doc, const std::string& text, int n, bool ablated) {
  const attn::ui::RealModelRun& r = doc.shown();
  if (r.state->text != text || static_cast<int>(r.text.ids.size()) != n || (r.baseline != nullptr) != ablated)
    throw std::runtime_error("the shown run is not the edit's: " + std::to_string(r.text.ids.size()) + " tokens, " +
                             std::to_string(n) +
                             " expected (a folder whose tokenizer makes one token per character "
                             "is needed: bench/checkpoint_bench.py's)");
}

// ----------------------------------------------------------------------------------------------------------------
// The peers: PyTorch (checkpoint_bench.py --peer-child) and the command line
// ----------------------------------------------------------------------------------------------------------------

std::string thread_env(int threads) {
  const std::string t = std::to_string(threads);
  return "OMP_NUM_THREADS=" + t + " OPENBLAS_NUM_THREADS=" + t + " MKL_NUM_THREADS=" + t + " ";
}

struct PeerResult {
  std::vector<double> seconds;  // a process each: reading and converting the weights, the forward pass
  std::vector<double> warm;     // in the warm-up process: the forward pass with the weights kept in float64
  std::string openblas;
};

// One warm-up run, then `runs` timed ones: the seconds the child reports (after its imports, to the top five). The
// warm-up run also times `runs` passes with the weights kept.
PeerResult pytorch_side(const Args& a, const std::string& text, int threads, int runs) {
  const std::string command = thread_env(threads) + "/usr/bin/python3 " + shell_quote(a.peer.string()) +
                              " --peer-child " + shell_quote(a.folder.string()) + " --threads " +
                              std::to_string(threads) + " --text " + shell_quote(text);
  PeerResult r;
  for (int i = 0; i <= runs; ++i) {
    const nlohmann::json out =
        nlohmann::json::parse(run_command(command + (i == 0 ? " --warm " + std::to_string(runs) : "")));
    if (out.at("ids").size() != text.size())
      throw std::runtime_error("the PyTorch side read " + std::to_string(out.at("ids").size()) + " tokens, not " +
                               std::to_string(text.size()));
    if (i == 0) {
      r.openblas = out.at("openblas").is_null() ? "none mapped" : out.at("openblas").dump();
      r.warm = out.at("warm_seconds").get<std::vector<double>>();
      continue;
    }
    r.seconds.push_back(out.at("seconds").get<double>());
  }
  return r;
}

// `attention-lab run FOLDER --text TEXT`, start to exit: one warm-up run, then `runs`.
std::vector<double> cli_side(const Args& a, const std::string& text, int threads, int runs) {
  const std::string command = thread_env(threads) + shell_quote(a.cli.string()) + " run " +
                              shell_quote(a.folder.string()) + " --text " + shell_quote(text) + " > /dev/null";
  std::vector<double> s;
  for (int i = 0; i <= runs; ++i) {
    const auto start = Clock::now();
    run_command(command);
    if (i > 0) s.push_back(since(start));
  }
  return s;
}

// ----------------------------------------------------------------------------------------------------------------
// Where the time goes: the forward pass's parts, on this thread, with the worker's thread count
// ----------------------------------------------------------------------------------------------------------------

// A checkpoint's weights converted once and kept (about 1 GB of float64 for GPT-2 small): what the forward pass costs
// when nothing is read from the file. Only for a tied model (the unembedding is the token embedding).
class KeptWeights final : public attn::ModelWeights {
 public:
  explicit KeptWeights(const attn::CheckpointModel& m) : m_(m) {
    for (int l = 0; l < static_cast<int>(m.model().layers.size()); ++l) layers_.push_back(m.layer(l));
    std::vector<int> all(static_cast<std::size_t>(m.config().vocab));
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    unembedding_ = m.embedding_rows(all).transpose();  // (d_model, vocab)
    gain_ = m.final_gain();
    bias_ = m.final_bias();
  }
  attn::ModelLayer layer(int l) const override { return layers_[static_cast<std::size_t>(l)]; }
  attn::Matrix embedding_rows(const std::vector<int>& ids) const override { return m_.embedding_rows(ids); }
  attn::Matrix learned_positions(int n) const override { return m_.learned_positions(n); }
  attn::SharedMatrix final_gain() const override { return gain_; }
  attn::SharedMatrix final_bias() const override { return bias_; }
  attn::Matrix logits(const attn::Matrix& final) const override {
    return attn::product(final, unembedding_);  // in tiles shared among the threads, as the layers' products
  }

 private:
  const attn::CheckpointModel& m_;
  std::vector<attn::ModelLayer> layers_;
  attn::Matrix unembedding_;
  attn::SharedMatrix gain_, bias_;
};

// The multiply-adds of one forward pass of n tokens (GPT-2's shape: QKV, each head's scores and weighted values over
// the causal cells, the output projection, the MLP; the unembedding of every position over the whole vocabulary).
double forward_macs(const attn::CheckpointModel& m, double n) {
  const auto& c = m.config();
  const double e = c.d_model, inner = c.d_ff, cells = n * (n + 1) / 2;
  const double q = double(c.heads) * c.head_dim, kv = double(c.kv_heads) * c.head_dim;
  const double ffn = (c.family == attn::ModelFamily::Gpt2 ? 2 : 3) * n * e * inner;
  const double layer = n * e * (q + 2 * kv) + 2 * cells * q + n * q * e + ffn;
  return double(m.model().layers.size()) * layer + n * e * c.vocab;
}

// float64 multiply rate of product() (tiles shared among the threads) on a (512 x 768)(768 x 3072) product, FLOP/s,
// the best of 5: what the layers' products can reach here.
double product_rate() {
  const attn::Matrix x = attn::Matrix::Random(512, 768), w = attn::Matrix::Random(768, 3072);
  (void)attn::product(x, w);
  double best = INFINITY;
  for (int i = 0; i < 5; ++i) {
    const auto start = Clock::now();
    (void)attn::product(x, w);
    best = std::min(best, since(start));
  }
  return 2.0 * 512 * 768 * 3072 / best;
}

struct Phase {
  std::string name;
  std::vector<double> seconds;
};

template <class F>
Phase time_phase(const std::string& name, int runs, F&& f) {
  Phase p{name, {}};
  f();  // warm-up
  for (int i = 0; i < runs; ++i) {
    const auto start = Clock::now();
    f();
    p.seconds.push_back(since(start));
  }
  return p;
}

std::vector<Phase> phases_at(const attn::CheckpointModel& m, const KeptWeights* kept, const std::string& text,
                             int runs) {
  const attn::Encoding e = attn::checkpoint_text(m, text, "text");
  const int layers = static_cast<int>(m.model().layers.size());
  const attn::ModelRunOptions window{
      .kept = std::vector<int>{}, .overview = attn::ui::kModelOverview, .head_scores = true};
  const attn::ModelRunOptions plain{.kept = std::vector<int>{}};
  attn::Matrix final = attn::Matrix::Random(static_cast<Eigen::Index>(e.ids.size()), m.config().d_model);
  std::vector<Phase> out;
  out.push_back(
      time_phase("every layer's weights read and converted (" + std::to_string(layers) + " layers)", runs, [&] {
        for (int l = 0; l < layers; ++l) (void)m.layer(l);
      }));
  out.push_back(time_phase("the unembedding (" + std::to_string(m.config().vocab) + " rows read, converted, product)",
                           runs, [&] { (void)m.logits(final); }));
  out.push_back(time_phase("forward pass, nothing kept (run FOLDER's)", runs,
                           [&] { (void)attn::run_model(m.model(), e.pieces, e.ids, m, plain); }));
  out.push_back(time_phase("forward pass as the document runs it (overviews, head scores)", runs,
                           [&] { (void)attn::run_model(m.model(), e.pieces, e.ids, m, window); }));
  if (kept) {
    out.push_back(time_phase("the same, weights kept converted in memory", runs,
                             [&] { (void)attn::run_model(m.model(), e.pieces, e.ids, *kept, window); }));
    out.push_back(time_phase("  of which the unembedding (kept)", runs, [&] { (void)kept->logits(final); }));
    attn::ModelRunOptions one = window;
    one.layers = 1;
    attn::ModelRunOptions none = window;
    none.layers = 0;
    const Phase first = time_phase("", runs, [&] { (void)attn::run_model(m.model(), e.pieces, e.ids, *kept, one); });
    const Phase embed = time_phase("", runs, [&] { (void)attn::run_model(m.model(), e.pieces, e.ids, *kept, none); });
    out.push_back({"  of which one layer (kept; the embedding's run subtracted)",
                   {median(first.seconds) - median(embed.seconds)}});
    attn::ModelRunOptions bare = plain;
    out.push_back(time_phase("  the same without overviews and head scores (kept)", runs,
                             [&] { (void)attn::run_model(m.model(), e.pieces, e.ids, *kept, bare); }));
  }
  return out;
}

// ----------------------------------------------------------------------------------------------------------------

struct Row {
  int n = 0;
  Series edits, ablate_on, ablate_off;
  PeerResult pytorch;
  std::vector<double> cli;
  double rss_after = 0;                               // peak RSS of this process once this size's edits were done
  std::int64_t predicted = 0, predicted_ablated = 0;  // real_model_run_bytes
  std::vector<Phase> phases;
  double flops = NAN;  // of one forward pass
};

double target_of(int n) { return n == 32 ? 0.3 : n == 128 ? 1.0 : NAN; }  // the two sizes

std::string ms(double s) {
  if (std::isnan(s)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", s * 1000);
  return buf;
}

std::string fixed(double v, int digits) {
  if (std::isnan(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string mib(double bytes) { return fixed(bytes / (1 << 20), 0) + " MiB"; }

nlohmann::json series_json(const Series& s) {
  return {{"wall_s", s.walls()},
          {"worker_s", s.workers()},
          {"median_s", median(s.walls())},
          {"p90_s", p90(s.walls())},
          {"worker_median_s", median(s.workers())},
          {"minor_faults", s.faults()}};
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse_args(argc, argv);
  // The window's heap (app/main.cpp): freed matrices stay in the heap for the next computation, every thread
  // allocating from one arena (a worker's own arena gives whole freed heaps back to the kernel whatever
  // M_TRIM_THRESHOLD says, and they are faulted in afresh). default: glibc's settings.
  if (a.heap != "default") {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_MMAP_MAX, 0);
  }
  if (a.heap == "window") mallopt(M_ARENA_MAX, 1);
#if defined(_OPENMP)
  const int threads = omp_get_num_procs();  // what the document's worker uses (latest_worker.cpp)
  omp_set_num_threads(threads);
#else
  const int threads = 1;
#endif
  try {
    const Ablation head{.heads = {a.head}};
    RealModelDocument doc;
    Driver driver(doc);
    const OtherLoad during_document;
    const std::array<std::string, 2> first = texts_of(a.tokens.front());
    const double rss_start = peak_rss_bytes();
    const double opened = driver.open(a.folder, first[0]);
    check_shown(doc, first[0], a.tokens.front(), false);
    const attn::CheckpointModel& model = *doc.shown().model;
    const auto& c = model.config();
    std::cout << "real-model-bench: " << a.folder.string() << " (" << model.name() << ": d_model " << c.d_model << ", "
              << model.model().layers.size() << " layers of " << c.heads << " heads, vocabulary " << c.vocab << ")\n"
              << "heap: " << a.heap << "\n"
              << "threads: " << threads << " (the worker's: every core; the PyTorch side is given the same)\n"
              << "open, first result shown (" << a.tokens.front() << " tokens): " << ms(opened) << " ms\n"
              << "runs: " << a.runs << " edits and " << a.runs << " ablation toggles each way per size, after one "
              << "warm-up each; ablated head " << attn::head_name(a.head) << "; PyTorch: 1 warm-up, then "
              << (a.no_peer ? 0 : a.peer_runs) << " runs\n"
              << std::flush;

    std::vector<Row> rows;
    for (int n : a.tokens) {
      Row row;
      row.n = n;
      const std::array<std::string, 2> t = texts_of(n);
      driver.text(t[1]);  // to this size (or a warm-up edit)
      driver.text(t[0]);
      check_shown(doc, t[0], n, false);
      for (int i = 0; i < a.runs; ++i) {
        const std::string& next = t[(i + 1) % 2];
        row.edits.samples.push_back(driver.text(next));
        check_shown(doc, next, n, false);
      }
      const std::string now = doc.state().text;
      driver.ablation(head);  // warm-up
      driver.ablation({});
      for (int i = 0; i < a.runs; ++i) {
        row.ablate_on.samples.push_back(driver.ablation(head));
        check_shown(doc, now, n, true);
        row.ablate_off.samples.push_back(driver.ablation({}));
        check_shown(doc, now, n, false);
      }
      row.rss_after = peak_rss_bytes();
      row.predicted = attn::ui::real_model_run_bytes(model, n, false);
      row.predicted_ablated = attn::ui::real_model_run_bytes(model, n, true);
      std::cout << "  " << n << " tokens: edits " << ms(median(row.edits.walls())) << " ms, ablation on "
                << ms(median(row.ablate_on.walls())) << " ms, off " << ms(median(row.ablate_off.walls()))
                << " ms (medians)\n"
                << std::flush;
      rows.push_back(std::move(row));
    }
    const double rss_document = peak_rss_bytes();
    const std::string load_document = during_document.report();
    double rate = NAN;
    const OtherLoad during_peers;

    // The peers, one process at a time while the document's worker is idle.
    for (Row& row : rows) {
      const std::string text = texts_of(row.n)[0];
      if (!a.no_peer) row.pytorch = pytorch_side(a, text, threads, a.peer_runs);
      if (!a.cli.empty()) row.cli = cli_side(a, text, threads, a.peer_runs);
    }

    const std::string load_peers = during_peers.report();
    const OtherLoad during_phases;
    // Where the time goes, on a model of our own (the document's stays as it is).
    if (a.phases) {
      const auto m = attn::CheckpointModel::open(a.folder, attn::limits::kDefaultMemoryBudget);
      std::unique_ptr<KeptWeights> kept;
      if (m->config().tie_word_embeddings) kept = std::make_unique<KeptWeights>(*m);
      for (Row& row : rows) row.phases = phases_at(*m, kept.get(), texts_of(row.n)[0], std::max(3, a.runs / 2));
      rate = product_rate();
      for (Row& row : rows) row.flops = 2 * forward_macs(*m, row.n);
    }

    const std::string load_phases = during_phases.report();
    // The table.
    std::cout << "\nEdit (or ablation toggled) to its result shown by poll(), wall time; worker: the forward pass's "
                 "own time (RealModelRun::seconds)\n\n";
    std::cout << "|   N | what | median ms | p90 ms | worker median ms | faults | PyTorch ms | ours/PyTorch | PyTorch "
                 "kept ms | target | met |\n| --: | --- | --: | --: | --: | --: | --: | --: | --: | --: | --- |\n";
    nlohmann::json report;
    for (const Row& row : rows) {
      const double peer = median(row.pytorch.seconds);
      const double target = target_of(row.n);
      const std::array<std::pair<const char*, const Series*>, 3> kinds{
          {{"edit of the text", &row.edits}, {"ablation on", &row.ablate_on}, {"ablation off", &row.ablate_off}}};
      for (const auto& [what, s] : kinds) {
        const double med = median(s->walls());
        std::cout << "| " << row.n << " | " << what << " | " << ms(med) << " | " << ms(p90(s->walls())) << " | "
                  << ms(median(s->workers())) << " | " << fixed(median(s->faults()), 0) << " | " << ms(peer) << " | "
                  << fixed(med / peer, 2) << " | " << ms(median(row.pytorch.warm)) << " | "
                  << (std::isnan(target) ? "-" : ms(target)) << " | "
                  << (std::isnan(target) ? "-"
                      : med < target     ? "yes"
                                         : "NO")
                  << " |\n";
      }
    }
    std::cout << "\nfaults: minor page faults of the process during the edit, median. PyTorch: "
                 "bench/checkpoint_bench.py's side in a process per run, float64, reading and converting the weights "
                 "as ours does; seconds from after its imports to the top five. PyTorch kept: the same forward pass "
                 "with the weights decoded once and kept in float64. Ablation on: one pass (the unablated run on "
                 "screen is reused); off: that run shown again.\n";
    if (!a.cli.empty()) {
      std::cout << "attention-lab run FOLDER --text TEXT, process start to exit:";
      for (const Row& row : rows) std::cout << " " << row.n << " tokens " << ms(median(row.cli)) << " ms;";
      std::cout << "\n";
    }
    std::cout << "Other load: the document's edits " << load_document << "; the peers " << load_peers;
    if (a.phases) std::cout << "; the phases " << load_phases;
    std::cout << "\n";
    if (!rows.empty() && !rows.front().pytorch.openblas.empty())
      std::cout << "OpenBLAS in the PyTorch side: " << rows.front().pytorch.openblas << "\n";

    std::cout << "\nPeak RSS of this process: " << mib(rss_start) << " before opening, " << mib(rss_document)
              << " after every edit (";
    for (std::size_t i = 0; i < rows.size(); ++i)
      std::cout << (i ? ", " : "") << mib(rows[i].rss_after) << " once " << rows[i].n << " tokens were done";
    std::cout << ")\nreal_model_run_bytes (what the document budgets for one result):";
    for (const Row& row : rows)
      std::cout << " " << row.n << " tokens " << mib(static_cast<double>(row.predicted)) << ", ablated "
                << mib(static_cast<double>(row.predicted_ablated)) << ";";
    std::cout << "\n";

    if (a.phases) {
      std::cout << "\nWhere the time goes (this thread, " << threads << " threads, median of "
                << std::max(3, a.runs / 2) << " after a warm-up):\n";
      std::cout << "  product() rate: " << fixed(rate / 1e9, 1) << " GFLOP/s ((512 x 768)(768 x 3072), best of 5)\n";
      for (const Row& row : rows) {
        std::cout << "  " << row.n << " tokens: " << fixed(row.flops / 1e9, 1) << " GFLOP a forward pass, "
                  << ms(row.flops / rate) << " ms at that rate (the arithmetic's limit)\n";
        for (const Phase& p : row.phases) std::cout << "    " << ms(median(p.seconds)) << " ms  " << p.name << "\n";
      }
    }

    if (!a.json.empty()) {
      report["folder"] = a.folder.string();
      report["threads"] = threads;
      report["heap"] = a.heap;
      report["open_s"] = opened;
      report["peak_rss_bytes"] = rss_document;
      report["product_flops_per_s"] = rate;
      report["other_load"] = {{"document", load_document}, {"peers", load_peers}, {"phases", load_phases}};
      for (const Row& row : rows) {
        nlohmann::json r{{"tokens", row.n},
                         {"edit", series_json(row.edits)},
                         {"ablation_on", series_json(row.ablate_on)},
                         {"ablation_off", series_json(row.ablate_off)},
                         {"pytorch_s", row.pytorch.seconds},
                         {"pytorch_median_s", median(row.pytorch.seconds)},
                         {"pytorch_kept_s", row.pytorch.warm},
                         {"pytorch_kept_median_s", median(row.pytorch.warm)},
                         {"cli_s", row.cli},
                         {"peak_rss_bytes_after", row.rss_after},
                         {"real_model_run_bytes", row.predicted},
                         {"real_model_run_bytes_ablated", row.predicted_ablated},
                         {"target_s", target_of(row.n)},
                         {"forward_flops", row.flops}};
        for (const Phase& p : row.phases) r["phases"].push_back({{"name", p.name}, {"seconds", p.seconds}});
        report["sizes"].push_back(r);
      }
      std::ofstream(a.json) << report.dump(2) << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "real-model-bench: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
