#include "profiles/trace_file.hpp"
