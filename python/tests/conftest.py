"""Shared fixtures of the Python module's suites: the `mutwo` program (to compare with), the test
fixtures folder, and a results database written by tests/make_results_fixture. ctest runs these
suites (tests/CMakeLists.txt, python_pytest) with the paths in the environment."""
import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _env_path(name, default):
    return pathlib.Path(os.environ.get(name, default))


@pytest.fixture(scope="session")
def fixtures():
    return _env_path("MUTWO_TEST_FIXTURES", ROOT / "tests" / "fixtures")


@pytest.fixture(scope="session")
def cli_json():
    """Runs `mutwo ARGS --json` and returns what it printed, parsed."""
    cli = _env_path("MUTWO_CLI", ROOT / "build" / "cli" / "mutwo")

    def run(*args):
        out = subprocess.run([str(cli), *map(str, args), "--json"], check=True, capture_output=True, text=True)
        return json.loads(out.stdout)

    return run


@pytest.fixture(scope="session")
def results_db(tmp_path_factory):
    """The six-run database of tests/cli_compare.cmake (make_results_fixture.cpp lists its runs)."""
    maker = _env_path("MUTWO_MAKE_RESULTS", ROOT / "build" / "tests" / "make_results_fixture")
    path = tmp_path_factory.mktemp("db") / "runs.db"
    subprocess.run([str(maker), "runs", str(path)], check=True, capture_output=True)
    return path
