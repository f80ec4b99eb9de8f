// Helpers for testing the rewrite cache's shapes (rewriter/literal_shape.h):
// a statement with other integer constants, and what tells two results apart.
#pragma once

#include <random>
#include <string>

#include "rewriter/rewriter.h"

namespace kanon::testing {

// `sql` with each constant of its shape replaced by another of the same
// class (zero, an integer, more than an integer); `sql` itself when it has
// no shape.
std::string with_other_constants(const std::string& sql, std::mt19937& rng);

// The first field in which `got` differs from `want` ("" when none; the
// cache_hit flag aside).
std::string result_difference(const rewriter::RewriteResult& got,
                              const rewriter::RewriteResult& want);

}  // namespace kanon::testing
