// Policy registry: names in registration order, helpful errors for unknown names, no duplicates.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "policies/policy_registry.hpp"
#include "support/error.hpp"

using namespace mutwo;
using policies::MemoryPolicy;
using policies::PolicyInfo;
using policies::PolicyRegistry;

namespace {

class NamedPolicy : public MemoryPolicy {
 public:
  explicit NamedPolicy(std::string name) : name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  policies::PolicyResult plan(const policies::PolicyInput&) const override { return {}; }

 private:
  std::string name_;
};

PolicyInfo info(const std::string& name) {
  return {name, "test policy " + name, "test", [name] { return std::make_unique<NamedPolicy>(name); }};
}

}  // namespace

TEST_CASE("the registry lists policies in registration order and creates them by name") {
  PolicyRegistry r;
  r.add(info("b"));
  r.add(info("a"));
  r.add(info("c"));
  CHECK(r.names() == std::vector<std::string>{"b", "a", "c"});
  CHECK(r.contains("a"));
  CHECK_FALSE(r.contains("d"));
  CHECK(r.find("c").description == "test policy c");
  CHECK(r.create("a")->name() == "a");
}

TEST_CASE("an unknown policy name lists the valid ones") {
  PolicyRegistry r;
  r.add(info("none"));
  r.add(info("checkpoint"));
  CHECK_THROWS_WITH_AS(r.find("x"), "unknown policy 'x'; valid: none, checkpoint", UnknownNameError);
  CHECK_THROWS_WITH_AS(r.create("x"), "unknown policy 'x'; valid: none, checkpoint", UnknownNameError);
}

TEST_CASE("duplicate names, missing names and missing factories are refused") {
  PolicyRegistry r;
  r.add(info("none"));
  CHECK_THROWS_WITH_AS(r.add(info("none")), "policy 'none' registered twice", Error);
  CHECK_THROWS_WITH_AS(r.add(info("")), "policy registered without a name", Error);
  PolicyInfo no_factory = info("x");
  no_factory.create = nullptr;
  CHECK_THROWS_WITH_AS(r.add(no_factory), "policy 'x' registered without a factory", Error);
  CHECK(r.names() == std::vector<std::string>{"none"});
}

TEST_CASE("the built-in registry starts with none, checkpoint, vdnn; every built-in is described and cited") {
  const std::vector<std::string> names = policies::builtin_policies().names();
  REQUIRE(names.size() >= 3);
  CHECK(names[0] == "none");
  CHECK(names[1] == "checkpoint");
  CHECK(names[2] == "vdnn");
  for (const PolicyInfo& p : policies::builtin_policies().policies()) {
    CAPTURE(p.name);
    CHECK_FALSE(p.description.empty());
    CHECK_FALSE(p.citation.empty());
    CHECK(policies::builtin_policies().create(p.name)->name() == p.name);
  }
  CHECK(policies::builtin_policies().find("checkpoint").citation.find("Chen") != std::string::npos);
  CHECK(policies::builtin_policies().find("vdnn").citation.find("Rhu") != std::string::npos);
}
