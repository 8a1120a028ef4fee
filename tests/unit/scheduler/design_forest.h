// The CellForest of HiveD's design config (testdata.h), for the component unit tests.
#ifndef HIVED_TESTS_UNIT_SCHEDULER_DESIGN_FOREST_H_
#define HIVED_TESTS_UNIT_SCHEDULER_DESIGN_FOREST_H_

#include <utility>

#include "cellalloc/cell_forest.h"
#include "hived/config.h"
#include "support/catch.h"
#include "unit/scheduler/testdata.h"

namespace hived::testdata {

inline cellalloc::CellForest DesignForest() {
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecString(kDesignYaml);
  REQUIRE(spec.ok());
  absl::StatusOr<cellalloc::CellForest> forest = cellalloc::CellForest::Build(*spec);
  REQUIRE(forest.ok());
  return *std::move(forest);
}

}  // namespace hived::testdata

#endif  // HIVED_TESTS_UNIT_SCHEDULER_DESIGN_FOREST_H_
