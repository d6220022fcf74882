#include "profiles/autodiff.hpp"
