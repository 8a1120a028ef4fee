// The cluster of the MIG and host-group persistence tests: tests/unit/sharing/mig_cluster.h's
// A100 rack (MIG, `protected`) and V100 node, with CPU and host memory declared on every
// node (m0, m1: 8000 milli and 64000 MiB; v0: 4000 and 32000), so that whole-GPU host
// groups, CPU-only groups, MIG and fractional groups all live in one scheduler.
#ifndef HIVED_TESTS_SUPPORT_MIG_HOST_CLUSTER_H_
#define HIVED_TESTS_SUPPORT_MIG_HOST_CLUSTER_H_

#include <string>

#include "absl/strings/str_replace.h"
#include "hived/config.h"
#include "support/catch.h"
#include "unit/sharing/mig_cluster.h"

namespace hived::testdata {

inline std::string MigHostYaml() {
  std::string y = absl::StrReplaceAll(
      kMigYaml, {{"    - cellAddress: m0\n",
                  "    - cellAddress: m0\n      cpuMilli: 8000\n      memoryMiB: 64000\n"},
                 {"    - cellAddress: m1\n",
                  "    - cellAddress: m1\n      cpuMilli: 8000\n      memoryMiB: 64000\n"},
                 {"    cellAddress: v0\n",
                  "    cellAddress: v0\n    cpuMilli: 4000\n    memoryMiB: 32000\n"}});
  REQUIRE(y != std::string(kMigYaml));
  return y;
}

inline ClusterSpec MigHostSpec() {
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecString(MigHostYaml(), "mig-host.yaml");
  REQUIRE(spec.ok());
  return *spec;
}

}  // namespace hived::testdata

#endif  // HIVED_TESTS_SUPPORT_MIG_HOST_CLUSTER_H_
