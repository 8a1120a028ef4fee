# Warnings for hived's own code, never for users of the installed package.
add_library(hived_warnings INTERFACE)
target_compile_options(hived_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wnon-virtual-dtor -Woverloaded-virtual
  -Werror=unused-result
  $<$<CXX_COMPILER_ID:Clang>:-Wthread-safety>
  $<$<BOOL:${HIVED_WERROR}>:-Werror>)
