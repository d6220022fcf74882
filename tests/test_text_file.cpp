// The one reader and the one atomic writer (support/text_file.hpp): what they refuse before reading
// or writing, and a link written through rather than replaced.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "support/error.hpp"
#include "support/text_file.hpp"

namespace fs = std::filesystem;
using mutwo::support::read_file_bytes;
using mutwo::support::write_file_atomic;

namespace {

// A fresh folder per case, removed after it.
struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("mutwo-text-file-" + std::to_string(::getpid()));
  Scratch() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() { fs::remove_all(dir); }
};

std::string contents(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("a link is written through to its target, which it keeps pointing at") {
  const Scratch s;
  fs::create_symlink("target.json", s.dir / "link.json");  // dangling until written
  write_file_atomic(s.dir / "link.json", "{}\n", "schedule file");
  CHECK(fs::is_symlink(s.dir / "link.json"));
  CHECK(contents(s.dir / "target.json") == "{}\n");
  write_file_atomic(s.dir / "link.json", "[]\n");  // and again, over the existing target
  CHECK(fs::is_symlink(s.dir / "link.json"));
  CHECK(contents(s.dir / "target.json") == "[]\n");
}

TEST_CASE("what cannot be written is refused before anything is, naming the path and why") {
  const Scratch s;
  CHECK_THROWS_WITH_AS(
      write_file_atomic("/dev/null", "x", "timeline"),
      "cannot write timeline '/dev/null': /dev/null is a device, pipe or socket, not a regular file",
      mutwo::Error);
  CHECK(fs::is_character_file("/dev/null"));
  CHECK_THROWS_WITH_AS(
      write_file_atomic(s.dir, "x"),
      ("cannot write '" + s.dir.string() + "': " + s.dir.string() + " is a directory, not a regular file")
          .c_str(),
      mutwo::Error);
  CHECK_THROWS_WITH_AS(write_file_atomic(s.dir / "missing" / "x.json", "x", "schedule file"),
                       ("cannot write schedule file '" + (s.dir / "missing" / "x.json").string() +
                        "': no directory '" + (s.dir / "missing").string() + "'")
                           .c_str(),
                       mutwo::Error);
  CHECK(fs::is_empty(s.dir));  // no temporary file left behind
}

TEST_CASE("a device is refused unread, and a pipe is read up to the cap") {
  CHECK_THROWS_WITH_AS(read_file_bytes("/dev/zero", "trace file"),
                       "cannot read trace file '/dev/zero': it is a device or socket, not a file",
                       mutwo::Error);
  const Scratch s;
  const fs::path fifo = s.dir / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::thread writer([&] {
    std::ofstream out(fifo);
    out << std::string(100, 'x');
  });
  CHECK_THROWS_WITH_AS(read_file_bytes(fifo, "log", 64),
                       ("log '" + fifo.string() + "' holds more than the 64 bytes mutwo reads").c_str(),
                       mutwo::Error);
  writer.join();
  std::thread short_writer([&] {
    std::ofstream out(fifo);
    out << "START\n";
  });
  CHECK(read_file_bytes(fifo, "log", 64) == "START\n");
  short_writer.join();
}

TEST_CASE("an output that names an input file, by any path or link, is refused before anything is read") {
  // `calibrate in.csv -o in.csv` replaced its input with the profile; `simulate --schedule s.json
  // --timeline s.json` its schedule with the timeline.
  const Scratch s;
  { std::ofstream(s.dir / "in.csv") << "x\n"; }
  fs::create_symlink("in.csv", s.dir / "link.csv");
  const std::string in = (s.dir / "in.csv").string();
  for (const fs::path& out : {s.dir / "in.csv", s.dir / "." / "in.csv", s.dir / "link.csv"}) {
    CAPTURE(out);
    CHECK_THROWS_WITH_AS(
        mutwo::support::check_output_paths({{"-o", out.string()}}, "calibrate: ", {{"input", in}}),
        ("calibrate: -o '" + out.string() + "' is the input file read ('" + in +
         "'): writing it would replace an input; give the output its own file")
            .c_str(),
        mutwo::Error);
  }
  CHECK(contents(s.dir / "in.csv") == "x\n");
  // Another file, or an output not written yet, is no input; an empty input flag names nothing.
  CHECK_NOTHROW(mutwo::support::check_output_paths({{"-o", (s.dir / "out.json").string()}}, "",
                                                   {{"input", in}, {"--schedule", ""}}));
}
