// src/internal/status_macros.h: propagate absl::Status without boilerplate.
//
//   HIVED_RETURN_IF_ERROR(DoThing());
//   HIVED_ASSIGN_OR_RETURN(Spec spec, LoadSpec(path));
//
// Abseil gained ABSL_RETURN_IF_ERROR only in LTS 20260526; switch when that is our floor.
#ifndef HIVED_SRC_INTERNAL_STATUS_MACROS_H_
#define HIVED_SRC_INTERNAL_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define HIVED_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::absl::Status hived_status_ = (expr);         \
    if (!hived_status_.ok()) return hived_status_; \
  } while (false)

#define HIVED_STATUS_CONCAT_INNER_(a, b) a##b
#define HIVED_STATUS_CONCAT_(a, b) HIVED_STATUS_CONCAT_INNER_(a, b)

#define HIVED_ASSIGN_OR_RETURN(lhs, expr) \
  HIVED_ASSIGN_OR_RETURN_IMPL_(HIVED_STATUS_CONCAT_(hived_statusor_, __LINE__), lhs, expr)

#define HIVED_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr)  \
  auto statusor = (expr);                                  \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()

#endif  // HIVED_SRC_INTERNAL_STATUS_MACROS_H_
