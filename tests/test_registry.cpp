// The one registry template: registration order, duplicate and unknown names, factories, pointers.
#include <doctest/doctest.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "support/error.hpp"
#include "support/registry.hpp"

using namespace mutwo;

namespace {

struct Plain {
  std::string name;
  int value = 0;
};

struct WithFactory {
  std::string name;
  std::function<int(int)> create;
};

class Named {
 public:
  explicit Named(std::string name) : name_(std::move(name)) {}
  virtual ~Named() = default;
  std::string_view name() const { return name_; }

 private:
  std::string name_;
};

}  // namespace

TEST_CASE("entries keep registration order and are found by name") {
  Registry<Plain> r("widget");
  r.add({"b", 2});
  r.add({"a", 1});
  r.add({"c", 3});
  CHECK(r.names() == std::vector<std::string>{"b", "a", "c"});
  CHECK(r.valid_names() == "b, a, c");
  CHECK(r.find("a").value == 1);
  CHECK(r.get("c").value == 3);
  CHECK(r.contains("b"));
  CHECK_FALSE(r.contains("d"));
  CHECK(r.lookup("d") == nullptr);
  CHECK(r.size() == 3);
  std::string order;
  for (const Plain& p : r) order += p.name;
  CHECK(order == "bac");  // iteration is registration order
}

TEST_CASE("an unknown name lists the valid ones; duplicates and empty names are refused") {
  Registry<Plain> r("widget");
  r.add({"none", 0});
  r.add({"some", 1});
  CHECK_THROWS_WITH_AS(r.find("x"), "unknown widget 'x'; valid: none, some", UnknownNameError);
  CHECK_THROWS_WITH_AS(r.add({"none", 5}), "widget 'none' registered twice", Error);
  CHECK_THROWS_WITH_AS(r.add({"", 5}), "widget registered without a name", Error);
  CHECK(r.find("none").value == 0);  // the refused duplicate changed nothing
}

TEST_CASE("a check runs before an entry is added") {
  Registry<Plain> r("widget", [](const Plain& p) {
    if (p.value < 0) throw Error("widget '" + p.name + "': value must be >= 0");
  });
  CHECK_THROWS_WITH_AS(r.add({"neg", -1}), "widget 'neg': value must be >= 0", Error);
  CHECK(r.empty());
}

TEST_CASE("entries with a factory are created by name and refused without one") {
  Registry<WithFactory> r("doubler");
  r.add({"twice", [](int x) { return 2 * x; }});
  CHECK(r.create("twice", 21) == 42);
  CHECK_THROWS_WITH_AS(r.create("thrice", 1), "unknown doubler 'thrice'; valid: twice", UnknownNameError);
  CHECK_THROWS_WITH_AS(r.add({"empty", nullptr}), "doubler 'empty' registered without a factory", Error);
}

TEST_CASE("owning pointers are registered under their object's name()") {
  Registry<std::unique_ptr<Named>> r("kind");
  r.add(std::make_unique<Named>("x"));
  r.add(std::make_unique<Named>("y"));
  CHECK(r.names() == std::vector<std::string>{"x", "y"});
  CHECK(r.find("y")->name() == "y");
  CHECK_THROWS_WITH_AS(r.add(std::make_unique<Named>("x")), "kind 'x' registered twice", Error);
}
