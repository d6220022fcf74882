#pragma once
// doctest for suites that include LibTorch. LibTorch's logging (glog) defines CHECK, CHECK_EQ, ...
// as aborting checks; included after doctest they silently replace doctest's assertions, which
// are then neither counted nor reported. Include this header instead of <doctest/doctest.h>, and
// before any other header that may pull LibTorch in: it includes LibTorch's logging first, drops
// its CHECK macros, then defines doctest's.
#include <ATen/ATen.h>

#undef CHECK
#undef CHECK_EQ
#undef CHECK_NE
#undef CHECK_LE
#undef CHECK_LT
#undef CHECK_GE
#undef CHECK_GT
#undef CHECK_NOTNULL

#include <doctest/doctest.h>
