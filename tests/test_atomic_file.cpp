// The one atomic write (core/io/atomic_file.h) and the checks around it: a temporary file of its own that never
// goes through a link or over a user's file, links followed, permission bits kept, every failure reported with its
// first reason and the good file left as it was; output that cannot be written is exit 2; outputs are checked
// before the work, and never replace the command's own input.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <functional>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "app/cli/args.h"
#include "app/cli/cli.h"
#include "app/gui/gui_options.h"
#include "app/gui/start_state.h"
#include "app/gui/user_files.h"
#include "core/io/atomic_file.h"
#include "core/io/scenario_write.h"
#include "gui_args.h"
#include "helpers.h"
#include "ui/logic/app_state.h"

using namespace attn;
using namespace attn::test;
namespace fs = std::filesystem;

namespace {

// The names in a folder, sorted: what a save left behind.
std::vector<std::string> atomic_names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

void atomic_put_text(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

mode_t atomic_mode_of(const fs::path& p) {
  struct stat st;
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

std::string atomic_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

const std::string kAtomicTinyModel = std::string(ATTN_ASSETS_DIR) + "/models/tiny.json";

}  // namespace

TEST_CASE("the temporary file never goes through a link nor over a file of the user's") {
  const fs::path dir = fresh_dir("atomic-names");
  atomic_put_text(dir / "victim.txt", "precious");
  // The names the saves used to take: a link there was written through, a file there destroyed.
  fs::create_symlink(dir / "victim.txt", dir / "out.json.saving");
  fs::create_symlink(dir / "victim.txt", dir / "out.json.writing");
  atomic_put_text(dir / "mine.json.saving", "the user's own");
  write_file_atomically(dir / "out.json", "new\n");
  write_file_atomically(dir / "mine.json", "saved\n");
  CHECK(read_file(dir / "victim.txt") == "precious");
  CHECK(read_file(dir / "mine.json.saving") == "the user's own");
  CHECK_FALSE(fs::is_symlink(dir / "out.json"));
  CHECK(read_file(dir / "out.json") == "new\n");
  CHECK(read_file(dir / "mine.json") == "saved\n");
  CHECK(atomic_names_in(dir) == std::vector<std::string>{"mine.json", "mine.json.saving", "out.json", "out.json.saving",
                                                         "out.json.writing", "victim.txt"});
  fs::remove_all(dir);
}

TEST_CASE("saving to a symbolic link writes the file it names and keeps the link") {
  const fs::path dir = fresh_dir("atomic-link");
  fs::create_directories(dir / "real");
  atomic_put_text(dir / "real" / "model.json", "old\n");
  fs::create_symlink("real/model.json", dir / "link.json");  // relative, as `ln -s` makes them
  fs::create_symlink("link.json", dir / "link2.json");       // a link to a link
  write_file_atomically(dir / "link2.json", "new\n");
  CHECK(fs::is_symlink(dir / "link.json"));
  CHECK(fs::is_symlink(dir / "link2.json"));
  CHECK(read_file(dir / "real" / "model.json") == "new\n");
  CHECK(atomic_names_in(dir / "real") == std::vector<std::string>{"model.json"});  // no temporary file left
  // A link to a file not made yet: the file is made where the link points.
  fs::create_symlink("real/later.json", dir / "dangling.json");
  write_file_atomically(dir / "dangling.json", "made\n");
  CHECK(fs::is_symlink(dir / "dangling.json"));
  CHECK(read_file(dir / "real" / "later.json") == "made\n");
  fs::remove_all(dir);
}

TEST_CASE("a saved file keeps its permission bits, a new one gets 0666 less the umask") {
  const fs::path dir = fresh_dir("atomic-mode");
  atomic_put_text(dir / "secret.json", "old");
  fs::permissions(dir / "secret.json", fs::perms::owner_read | fs::perms::owner_write);
  write_file_atomically(dir / "secret.json", "new");
  CHECK(atomic_mode_of(dir / "secret.json") == 0600);
  atomic_put_text(dir / "shared.json", "old");
  ::chmod((dir / "shared.json").c_str(), 0664);
  write_file_atomically(dir / "shared.json", "new");
  CHECK(atomic_mode_of(dir / "shared.json") == 0664);
  const mode_t mask = ::umask(027);
  write_file_atomically(dir / "fresh.json", "new");
  ::umask(mask);
  CHECK(atomic_mode_of(dir / "fresh.json") == 0640);
  fs::remove_all(dir);
}

TEST_CASE("a failed write reports its first reason and leaves the good file exactly as it was") {
  const fs::path dir = fresh_dir("atomic-fail");
  const fs::path file = dir / "model.json";
  atomic_put_text(file, "the good file\n");
  SUBCASE("the file system refuses the bytes (a file size limit: EFBIG, as a full disk gives ENOSPC)") {
    struct rlimit before;
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &before) == 0);
    struct rlimit small = before;
    small.rlim_cur = 64 << 10;
    const auto xfsz = std::signal(SIGXFSZ, SIG_IGN);
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
    const std::string message = atomic_error_of([&] { write_file_atomically(file, std::string(1 << 20, 'x')); });
    ::setrlimit(RLIMIT_FSIZE, &before);
    std::signal(SIGXFSZ, xfsz);
    CHECK(message == "cannot write " + file.string() + ": File too large");
  }
  SUBCASE("the writer stops half-way") {
    CHECK_THROWS_WITH(write_file_atomically(file,
                                            [](std::ostream& out) {
                                              out << std::string(100000, 'x');
                                              throw std::runtime_error("stopped");
                                            }),
                      "stopped");
  }
  CHECK(read_file(file) == "the good file\n");
  CHECK(atomic_names_in(dir) == std::vector<std::string>{"model.json"});
  fs::remove_all(dir);
}

TEST_CASE("what cannot be written is refused with a message that says why") {
  const fs::path dir = fresh_dir("atomic-refused");
  fs::create_directories(dir / "folder" / "inside");
  CHECK(atomic_error_of([&] { write_file_atomically(dir / "folder", "x"); }) ==
        "cannot write " + (dir / "folder").string() + ": it is a folder, not a file");
  CHECK(atomic_error_of([&] { write_file_atomically("/tmp", "x"); }) ==
        "cannot write /tmp: it is a folder, not a file");
  CHECK(fs::is_directory(dir / "folder" / "inside"));
  CHECK(atomic_error_of([&] { write_file_atomically(dir / "missing" / "x.json", "x"); }) ==
        "cannot write " + (dir / "missing" / "x.json").string() + ": the folder " + (dir / "missing").string() +
            " does not exist");
  atomic_put_text(dir / "plain", "a file");
  CHECK(atomic_error_of([&] { check_output_path(dir / "plain" / "x.json"); }) ==
        "cannot write " + (dir / "plain" / "x.json").string() + ": Not a directory");
  CHECK(atomic_error_of([&] { check_output_path(""); }) == "no file name given");
  CHECK(atomic_error_of([&] { write_file_atomically(dir / "fresh.json", "x", Existing::Keep); }) == "(no error)");
  CHECK(atomic_error_of([&] { write_file_atomically(dir / "fresh.json", "y", Existing::Keep); }) ==
        "cannot write " + (dir / "fresh.json").string() + ": File exists");
  CHECK(read_file(dir / "fresh.json") == "x");
  const std::string bad = (dir / "b\xff\x01.json").string();
  CHECK(atomic_error_of([&] { check_output_path(bad + "/x"); }) ==
        "cannot write " + (dir / "b\\xff\\x01.json").string() + "/x: the folder " +
            (dir / "b\\xff\\x01.json").string() + " does not exist");
  fs::remove_all(dir);
}

TEST_CASE("a pipe or a device is written in place, never replaced") {
  const fs::path dir = fresh_dir("atomic-fifo");
  const fs::path fifo = dir / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string received;
  std::thread reader([&] { received = read_file(fifo); });
  write_file_atomically(fifo, "through the pipe");
  reader.join();
  CHECK(received == "through the pipe");
  struct stat st;
  REQUIRE(::lstat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  CHECK(atomic_names_in(dir) == std::vector<std::string>{"pipe"});
  fs::remove_all(dir);
}

TEST_CASE("paths in messages: bytes that are not UTF-8 escaped, the rest as they are") {
  CHECK(shown_path("a/b\xff.json") == "a/b\\xff.json");
  CHECK(shown_path("caf\xc3\xa9/\xe7\x8c\xab.json") == "caf\xc3\xa9/\xe7\x8c\xab.json");
  CHECK(shown_path("over\xc0\xaflong") == "over\\xc0\\xaflong");
  CHECK(shown_path("cut\xe7\x8c") == "cut\\xe7\\x8c");
  CHECK(shown_path("line\nbreak") == "line\\x0abreak");
}

TEST_CASE("same_file sees one file under two names") {
  const fs::path dir = fresh_dir("atomic-same");
  atomic_put_text(dir / "a.json", "a");
  fs::create_symlink("a.json", dir / "link.json");
  CHECK(same_file(dir / "a.json", dir / "link.json"));
  CHECK(same_file(dir / "sub" / ".." / "a.json", dir / "a.json"));
  CHECK(same_file(dir / "new.json", dir / "." / "new.json"));
  CHECK_FALSE(same_file(dir / "new.json", dir / "a.json"));
  fs::remove_all(dir);
}

TEST_CASE("standard output's buffer filled to its last byte by a block takes the next character after it") {
  // The buffer holds 64 KiB: a block that fills it exactly, then single characters, then a block across its end.
  const fs::path dir = fresh_dir("atomic-stdout-buffer");
  const fs::path file = dir / "out.txt";
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  const std::string block(std::size_t{1} << 16, 'a'), tail(100000, 'c');
  {
    FdStreamBuf buffer(fd);
    std::ostream out(&buffer);
    out.write(block.data(), static_cast<std::streamsize>(block.size()));
    out.put('b');
    out << 'b';
    out.write(tail.data(), static_cast<std::streamsize>(tail.size()));
    out.flush();
    CHECK(out.good());
    CHECK(buffer.error() == 0);
  }
  ::close(fd);
  CHECK(read_file(file) == block + "bb" + tail);
  fs::remove_all(dir);
}

TEST_CASE("output that cannot be written is exit 2 with the reason") {
  const int full = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  REQUIRE(full >= 0);
  {
    FdStreamBuf buffer(full);
    std::ostream out(&buffer);
    std::ostringstream err;
    const std::vector<std::string> args = {"--version"};
    CHECK(cli::run_cli(args, out, err) == 2);
    CHECK(err.str() == "attention-lab: cannot write the output: No space left on device\n");
  }
  ::close(full);
  int ends[2];
  REQUIRE(::pipe(ends) == 0);
  ::close(ends[0]);  // the reader is gone
  const auto pipe_signal = std::signal(SIGPIPE, SIG_IGN);
  {
    FdStreamBuf buffer(ends[1]);
    std::ostream out(&buffer);
    std::ostringstream err;
    const std::vector<std::string> args = {"trace", asset("the_cat_sat.json")};
    CHECK(cli::run_cli(args, out, err) == 2);
    CHECK(err.str() == "attention-lab: cannot write the output: Broken pipe\n");
  }
  std::signal(SIGPIPE, pipe_signal);
  ::close(ends[1]);
  std::ostream nowhere(nullptr);  // a stream that takes nothing
  std::ostringstream err;
  const std::vector<std::string> help = {"--help"};
  CHECK(cli::run_cli(help, nowhere, err) == 2);
  CHECK(err.str() == "attention-lab: cannot write the output\n");
}

TEST_CASE("an output that is also the command's input is refused before any work") {
  const fs::path dir = fresh_dir("atomic-same-cli");
  const fs::path model = dir / "model.json";
  fs::copy_file(kAtomicTinyModel, model);
  const std::string before = read_file(model);
  const Run over_model =
      run({"trace", model.string(), "--layer", "0", "--tokens", "<s> a", "--scenario", model.string()});
  CHECK(over_model.code == 2);
  CHECK(over_model.err ==
        "attention-lab: trace: --scenario: " + model.string() +
            " is also the SCENARIO this command reads: write to another file (nothing was written)\n");
  CHECK(over_model.out.empty());
  CHECK(read_file(model) == before);
  fs::create_symlink("model.json", dir / "link.json");  // the same file by another name
  CHECK(run({"trace", model.string(), "--layer", "0", "--tokens", "<s> a", "--scenario", (dir / "link.json").string()})
            .code == 2);
  CHECK(read_file(model) == before);
  atomic_put_text(dir / "batches.json", R"({"batches": [[[0, 1, 2]]]})");
  const Run train = run({"train", "--model", model.string(), "--batches", (dir / "batches.json").string(), "--steps",
                         "1", "--save", (dir / "batches.json").string()});
  CHECK(train.code == 2);
  CHECK(contains(train.err, "train: --save: " + (dir / "batches.json").string() + " is also the --batches"));
  CHECK(train.out.empty());
  CHECK(run({"train", "--model", model.string(), "--batches", (dir / "batches.json").string(), "--steps", "1", "--save",
             model.string()})
            .code == 2);
  CHECK(read_file(model) == before);
  // Another file is fine.
  const Run ok =
      run({"trace", model.string(), "--layer", "0", "--tokens", "<s> a", "--scenario", (dir / "layer.json").string()});
  CHECK(ok.code == 0);
  CHECK(fs::exists(dir / "layer.json"));
  fs::remove_all(dir);
}

TEST_CASE("train checks --save before the first step") {
  const fs::path dir = fresh_dir("atomic-train-save");
  const Run empty = run({"train", "--task", "copy", "--steps", "1", "--save", ""});
  CHECK(empty.code == 2);
  CHECK(empty.err == "attention-lab: train: --save: no file name given\n");
  CHECK(empty.out.empty());
  const fs::path missing = dir / "no" / "such" / "model.json";
  const Run lost = run({"train", "--task", "copy", "--steps", "300", "--save", missing.string()});
  CHECK(lost.code == 2);
  CHECK(lost.err == "attention-lab: train: --save: cannot write " + missing.string() + ": the folder " +
                        (dir / "no" / "such").string() + " does not exist\n");
  CHECK(lost.out.empty());  // no step was taken: the run was not lost
  const Run folder = run({"train", "--task", "copy", "--steps", "1", "--save", dir.string()});
  CHECK(folder.code == 2);
  CHECK(folder.err == "attention-lab: train: --save: cannot write " + dir.string() + ": it is a folder, not a file\n");
  const Run trace = run({"trace", asset("the_cat_sat.json"), "--scenario", ""});
  CHECK(trace.code == 2);
  CHECK(trace.err == "attention-lab: trace: --scenario: no file name given\n");
  fs::remove_all(dir);
}

TEST_CASE("the window's outputs are checked before it opens") {
  const fs::path dir = fresh_dir("atomic-gui");
  const auto refused = test::gui_args_refusal;
  const fs::path missing = dir / "missing" / "state.json";
  CHECK(refused({"--dump-state", missing.string()}) == "--dump-state: cannot write " + missing.string() +
                                                           ": the folder " + (dir / "missing").string() +
                                                           " does not exist");
  CHECK(refused({"--screenshot", ""}) == "--screenshot: no file name given");
  CHECK(refused({"--screenshot", dir.string()}) ==
        "--screenshot: cannot write " + dir.string() + ": it is a folder, not a file");
  const std::string cat = asset("the_cat_sat.json");
  CHECK(refused({cat, "--screenshot", cat}) ==
        "--screenshot: " + cat +
            " is also the SCENARIO this command reads: write to another file (nothing was written)");
  CHECK(refused({"--screenshot", (dir / "a").string(), "--dump-state", (dir / "a").string()}) ==
        "--dump-state and --screenshot name the same file: give them two");
  CHECK(refused({"--screenshot", (dir / "a.png").string(), "--dump-state", (dir / "a.json").string()}) == "(no error)");
  fs::remove_all(dir);
}

namespace {

// A copy of the shipped assets a test may see written over.
fs::path copy_of_assets(const fs::path& dir) {
  const fs::path fa = dir / "fa";
  fs::copy(ATTN_ASSETS_DIR, fa, fs::copy_options::recursive);
  return fa;
}

}  // namespace

TEST_CASE("train --save never writes over the text the text task reads by default") {
  const fs::path dir = fresh_dir("atomic-default-text");
  const fs::path fa = copy_of_assets(dir);
  const test::ScopedEnv assets("ATTENTION_LAB_ASSETS", fa.string());
  const fs::path text = fa / "texts" / "sonnets.txt";
  const std::string before = read_file(text);
  const Run r = run({"train", "--task", "text", "--steps", "1", "--batch", "1", "--save", text.string()});
  CHECK(r.code == 2);
  CHECK(r.err == "attention-lab: train: --save: " + text.string() +
                     " is also the text this command reads: write to another file (nothing was written)\n");
  CHECK(r.out.empty());
  fs::create_symlink(text, dir / "link.txt");  // another name for it
  const Run link =
      run({"train", "--task", "text", "--steps", "1", "--batch", "1", "--save", (dir / "link.txt").string()});
  CHECK(link.code == 2);
  CHECK(contains(link.err, "is also the text this command reads"));
  CHECK(read_file(text) == before);
  // Another task does not read it.
  CHECK(run({"train", "--task", "copy", "--steps", "1", "--batch", "1", "--save", (dir / "copy.json").string()}).code ==
        0);
  fs::remove_all(dir);
}

TEST_CASE("the window's outputs never write over what it reads without being told") {
  const fs::path dir = fresh_dir("atomic-gui-implicit");
  const fs::path fa = copy_of_assets(dir);
  const test::ScopedEnv assets("ATTENTION_LAB_ASSETS", fa.string());
  const test::ScopedEnv config("XDG_CONFIG_HOME", (dir / "cfg").string());
  const auto refused = test::gui_args_refusal;
  const std::string shot = (dir / "x.png").string(), tail = ": write to another file (nothing was written)";
  const fs::path model = fa / "models" / "tiny.json", cat = fa / "scenarios" / "the_cat_sat.json";
  CHECK(refused({"--view", "model", "--screenshot", model.string()}) ==
        "--screenshot: " + model.string() + " is also the model this command reads" + tail);
  CHECK(refused({"--screenshot", shot, "--dump-state", cat.string()}) ==
        "--dump-state: " + cat.string() + " is also the scenario this command reads" + tail);
  const fs::path lesson = fa / "lessons" / "3_masks.json";
  CHECK(refused({"--lesson", "masks", "--screenshot", shot, "--dump-state", lesson.string()}) ==
        "--dump-state: " + lesson.string() + " is in the assets folder (" + fa.string() + ") the lab reads" +
            tail);
  CHECK(refused({"--screenshot", (fa / "new.png").string()}) == "--screenshot: " + (fa / "new.png").string() +
                                                                    " is in the assets folder (" + fa.string() +
                                                                    ") the lab reads" + tail);
  // The settings and recovery entries of the settings folder.
  const fs::path cfg = dir / "cfg" / "attention-lab";
  fs::create_directories(cfg);
  CHECK(refused({"--dump-state", (cfg / "settings.json").string()}) ==
        "--dump-state: " + (cfg / "settings.json").string() + " is in the settings folder (" + cfg.string() +
            ") the lab reads" + tail);
  // A scenario of one's own, and outputs beside it: written.
  fs::copy_file(cat, dir / "mine.json");
  CHECK(refused({(dir / "mine.json").string(), "--screenshot", shot, "--dump-state", (dir / "s.json").string()}) ==
        "(no error)");
  fs::remove_all(dir);
}

TEST_CASE("trace --scenario and train --save never write into the assets folder, over a file or beside one") {
  const fs::path dir = fresh_dir("atomic-cli-assets");
  const fs::path fa = copy_of_assets(dir);
  const test::ScopedEnv assets("ATTENTION_LAB_ASSETS", fa.string());
  const std::string tail = ") the lab reads: write to another file (nothing was written)\n";
  const fs::path dog = fa / "scenarios" / "the_lazy_dog.json", tiny = fa / "models" / "tiny.json";
  const std::string dog_before = read_file(dog), tiny_before = read_file(tiny);
  const Run over_dog =
      run({"trace", tiny.string(), "--layer", "0", "--tokens", "<s> a b", "--scenario", dog.string()});
  CHECK(over_dog.code == 2);
  CHECK(over_dog.err == "attention-lab: trace: --scenario: " + dog.string() + " is in the assets folder (" +
                            fa.string() + tail);
  CHECK(read_file(dog) == dog_before);
  const fs::path fresh = fa / "new.json";
  const Run beside = run({"trace", dog.string(), "--scenario", fresh.string()});
  CHECK(beside.code == 2);
  CHECK(beside.err ==
        "attention-lab: trace: --scenario: " + fresh.string() + " is in the assets folder (" + fa.string() + tail);
  CHECK_FALSE(fs::exists(fresh));
  const Run saved = run({"train", "--task", "induction", "--steps", "1", "--layers", "1", "--heads", "1", "--d-model",
                         "8", "--batch", "1", "--seq-len", "12", "--save", tiny.string()});
  CHECK(saved.code == 2);
  CHECK(saved.err ==
        "attention-lab: train: --save: " + tiny.string() + " is in the assets folder (" + fa.string() + tail);
  CHECK(read_file(tiny) == tiny_before);
  CHECK(run({"trace", dog.string(), "--scenario", (dir / "mine.json").string()}).code == 0);  // outside it: written
  fs::remove_all(dir);
}

TEST_CASE("--dump-state of a document whose path is not UTF-8 escapes the path") {
  const fs::path dir = fresh_dir("atomic-dump");
  const fs::path document = dir / "b\xff.json";
  const ui::AppState state(load_scenario_file(asset("the_cat_sat.json")), document);
  gui::dump_state((dir / "state.json").string(), state);
  const nlohmann::json j = nlohmann::json::parse(read_file(dir / "state.json"));
  CHECK(j["file"] == (dir / "b\\xff.json").string());
  CHECK(j["tokens"].size() == 3);
  fs::remove_all(dir);
}

TEST_CASE("settings are saved when a recent file's path is not UTF-8, without that file") {
  const fs::path dir = fresh_dir("atomic-settings");
  gui::Settings s;
  s.recent = {"/tmp/b\xff.json", "/tmp/good.json"};
  gui::save_settings(s, dir / "settings.json");
  CHECK(gui::load_settings(dir / "settings.json").recent == std::vector<std::string>{"/tmp/good.json"});
  fs::remove_all(dir);
}

TEST_CASE("the stream into the temporary file keeps every byte in order, small writes and large") {
  const fs::path dir = fresh_dir("atomic-order");
  std::string expected;
  write_file_atomically(dir / "out.txt", [&](std::ostream& out) {
    for (int i = 0; i < 3000; ++i) {
      const std::string piece = std::to_string(i) + (i % 7 ? "," : "\n");
      out << piece;
      expected += piece;
      if (i % 1000 == 999) {  // larger than the buffer: written past it, after what the buffer holds
        const std::string block(100000, static_cast<char>('a' + i / 1000));
        out << block;
        expected += block;
      }
      out.put('.');
      expected += '.';
    }
  });
  CHECK(read_file(dir / "out.txt") == expected);
  fs::remove_all(dir);
}

TEST_CASE("a batches file whose path is not UTF-8 trains and saves, the path escaped in the description") {
  const fs::path dir = fresh_dir("atomic-batches");
  const fs::path batches = dir / "b\xff.json";
  atomic_put_text(batches, R"({"batches": [[[0, 1, 2]]]})");
  const Run r = run({"train", "--model", kAtomicTinyModel, "--batches", batches.string(), "--steps", "1", "--save",
                     (dir / "out.json").string()});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(contains(read_file(dir / "out.json"), "the batches of " + (dir / "b\\\\xff.json").string()));
  fs::remove_all(dir);
}
