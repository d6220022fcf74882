# Executor suites (LibTorch); filled in as exec/ lands.
