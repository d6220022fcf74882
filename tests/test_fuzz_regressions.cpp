// Every input the fuzz targets found (tests/fixtures/fuzz/README.md) is refused by its reader with a
// mutwo::Error naming what is wrong: never a foreign exception or a crash.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "costmodel/calibration_csv.hpp"
#include "costmodel/wave_fit.hpp"
#include "experiments/results_db.hpp"
#include "io/dtr_log.hpp"
#include "io/execution_trace.hpp"
#include "io/kineto_trace.hpp"
#include "io/schedule_json.hpp"
#include "io/trace_file.hpp"
#include "support/error.hpp"
#include "support/text_file.hpp"

using namespace mutwo;
using namespace mutwo::support;
using namespace mutwo::ir;
using namespace mutwo::io;

namespace {

// The reader of the target the file is named after; it must return or throw mutwo::Error.
void read_as(const std::string& target, const std::string& text, const std::filesystem::path& path) {
  if (target == "trace_json") {
    trace_from_json(text);
  } else if (target == "schedule_json") {
    schedule_from_json(text);
  } else if (target == "kineto" || target == "execution_trace") {
    const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded()) return;
    if (target == "kineto" && is_kineto_document(doc)) import_kineto_trace(doc, "fuzz.json");
    if (target == "execution_trace" && is_execution_trace_document(doc))
      import_execution_trace(doc, "fuzz.json");
  } else if (target == "dtr_log") {
    dtr_log_to_trace(parse_dtr_log(text, "fuzz.log"), "fuzz.log");
  } else if (target == "calibration_input") {
    costmodel::prepare_wave_rows(costmodel::parse_calibration_input(text, "fuzz.csv", "a100-40gb"));
  } else if (target == "results_db") {
    const experiments::ResultsDb db =
        experiments::ResultsDb::open(path, experiments::ResultsDb::OpenMode::existing);
    for (const auto& e : db.experiments()) db.experiment_rows(e.name);
    db.runs();
  } else {
    FAIL("fixture names no target: " << target);
  }
}

}  // namespace

TEST_CASE("inputs the fuzzers found are refused with a clear error") {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(MUTWO_TEST_FIXTURES) + "/fuzz")) {
    const std::string name = entry.path().filename().string();
    if (name == "README.md") continue;
    ++files;
    CAPTURE(name);
    const std::string target = name.substr(0, name.find('-'));
    // A database is opened where it lies, on a copy (a reader may leave -wal/-shm files beside it).
    const std::filesystem::path copy =
        std::filesystem::temp_directory_path() / ("mutwo_fuzz_regression_" + name);
    std::filesystem::copy_file(entry.path(), copy, std::filesystem::copy_options::overwrite_existing);
    const std::string text = read_file_bytes(copy);
    bool refused = false;
    try {
      read_as(target, text, copy);
    } catch (const Error& e) {
      refused = true;
      const char* expected = target == "results_db"          ? "corrupt database"
                             : target == "calibration_input" ? "overflows 64-bit integers"
                                                             : "JSON";
      CHECK(std::string(e.what()).find(expected) != std::string::npos);
    }
    CHECK(refused);
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(copy.string() + suffix);
  }
  CHECK(files == 5);
}
