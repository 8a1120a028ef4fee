// Links the installed hived and calls its public API.
#include <cstdio>
#include <cstring>

#include "hived/config.h"
#include "hived/version.h"

int main() {
  hived::ConfigError error{"x.yaml", 1, 1, "physicalCluster", "example", ""};
  std::printf("hived %s: %s\n", hived::VersionString(), error.ToString().c_str());
  return std::strcmp(hived::VersionString(), "0.1.0") == 0 ? 0 : 1;
}
