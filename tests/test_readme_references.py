"""What the README names exists: environment variables, make targets, files and script flags.

The README's prose is read by people who then type what it says.  Its code blocks run in
``test_readme_examples.py``; this file checks the names in its text against the code, both
ways for environment variables: every variable the README names is read somewhere (or listed
in ``MXNET_VARIABLES``), every ``LAZYND_*`` variable the packages read and every MXNet variable
they honour is in the README, so a variable added or dropped cannot leave the README behind.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lazynd.environment import MXNET_VARIABLES

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
SOURCES = ("lazynd", "lazynd_sym", "lazynd_kv", "tools")
# names the README gives as prefixes or as other libraries' variables, not lazynd's own
NOT_LAZYND = {"MXNET_KVSTORE_", "MXNET_VARIABLES", "MXNET_MKLDNN_ENABLED"}
# variables only the docstring examples and the test helpers set
EXAMPLES_ONLY = {"LAZYND_EXAMPLE", "LAZYND_TEST_UTIL_ENV"}


def _code_text() -> str:
    files = [path for folder in SOURCES for path in sorted((ROOT / folder).rglob("*")) if path.suffix in (".py", ".sh")]
    return "\n".join(path.read_text() for path in files) + (ROOT / "Makefile").read_text()


CODE = _code_text()


def _readme_variables() -> set[str]:
    return set(re.findall(r"\b((?:LAZYND|MXNET)_[A-Z0-9_]+)", README)) - NOT_LAZYND


@pytest.mark.parametrize("name", sorted(_readme_variables()))
def test_every_variable_the_readme_names_is_read_by_the_code(name: str) -> None:
    assert name in MXNET_VARIABLES or f'"{name}"' in CODE or f"{name}:-" in CODE, name


def test_every_lazynd_variable_the_packages_read_is_in_the_readme() -> None:
    read = set(re.findall(r'"(LAZYND_[A-Z0-9_]+)"', CODE)) - EXAMPLES_ONLY
    assert read - _readme_variables() == set()


def test_every_mxnet_variable_lazynd_honours_is_in_the_readme() -> None:
    honoured = {name for name, what in MXNET_VARIABLES.items() if what.startswith("honoured")}
    assert honoured - _readme_variables() == set()


@pytest.mark.parametrize("target", sorted(set(re.findall(r"`make ([a-z-]+)", README))))
def test_every_make_target_the_readme_names_exists(target: str) -> None:
    assert re.search(rf"^{target}:", (ROOT / "Makefile").read_text(), flags=re.M), target


def _readme_paths() -> list[str]:
    found = re.findall(r"`((?:bench|tutorials|tests|tools|lazynd|lazynd_sym|lazynd_kv)/[A-Za-z0-9_./]+)`", README)
    return sorted({path.rstrip("/") for path in found})


@pytest.mark.parametrize("path", _readme_paths())
def test_every_file_the_readme_names_exists(path: str) -> None:
    assert (ROOT / path).exists(), path


def _script_flags() -> list[tuple[str, str]]:
    pairs = set()
    for script, arguments in re.findall(
        r"((?:bench|tutorials)/[a-z_]+\.py)((?:\s+--[a-z-]+(?:\s+[^\s`-][^\s`]*)?)+)", README
    ):
        pairs.update((script, flag) for flag in re.findall(r"--[a-z-]+", arguments))
    return sorted(pairs)


@pytest.mark.parametrize(("script", "flag"), _script_flags())
def test_every_script_flag_the_readme_names_is_taken(script: str, flag: str) -> None:
    # the tutorials share their flags through tutorials/_common.py
    text = (ROOT / script).read_text() + (ROOT / "tutorials" / "_common.py").read_text()
    assert f'"{flag}"' in text, f"{script} {flag}"
