#include <string>

#include "cellalloc/ids.h"
#include "hived/config.h"
#include "hived/types.h"
#include "hived/version.h"
#include "support/catch.h"

TEST_CASE("VersionString: reports the project version", "[foundation][unit]") {
  CHECK(std::string(hived::VersionString()) == "0.1.0");
}

TEST_CASE("StrongId: is nil by default and compares by value", "[foundation][unit]") {
  hived::CellId nil;
  CHECK(nil.IsNil());
  CHECK(nil == hived::CellId::Nil());
  hived::CellId a(3);
  hived::CellId b(4);
  CHECK_FALSE(a.IsNil());
  CHECK(a < b);
  CHECK(a != b);
  CHECK(a == hived::CellId(3));
}

TEST_CASE("ConfigError: formats file, position, path, message and hint", "[foundation][unit]") {
  hived::ConfigError error{"c.yaml", 12, 5, "physicalCluster.cellTypes.X", "bad", "fix it"};
  CHECK(error.ToString() == "c.yaml:12:5: physicalCluster.cellTypes.X: bad (fix it)");
  hived::ConfigError bare{"", 0, 0, "", "bad", ""};
  CHECK(bare.ToString() == "bad");
}
