#include "profiles/fusion.hpp"
