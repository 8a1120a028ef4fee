// tests/support/catch.h: the one Catch2 include every test uses. Picks Catch2 v3's header
// when the build has it, else v2's (Debian 12 ships 2.13). Use only the v2 API subset.
#ifndef HIVED_TESTS_SUPPORT_CATCH_H_
#define HIVED_TESTS_SUPPORT_CATCH_H_

#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#else
#include <catch2/catch.hpp>
#endif

#endif  // HIVED_TESTS_SUPPORT_CATCH_H_
