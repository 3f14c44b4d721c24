"""Packaging metadata: license, py.typed, the console script, kernel sources and the sdist's contents.

Read from setup.cfg and MANIFEST.in with setuptools' own machinery, without
building a distribution; one test runs ``setup.py build_py`` on a copy of the
sources (a second or so, no network) to catch setuptools' warnings.
"""

from __future__ import annotations

import configparser
import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("lazynd", "lazynd_sym", "lazynd_kv")


@pytest.fixture(scope="module")
def setup_cfg() -> configparser.ConfigParser:
    config = configparser.ConfigParser()
    assert config.read(ROOT / "setup.cfg")
    return config


def _lines(value: str) -> list[str]:
    return [line.strip() for line in value.strip().splitlines() if line.strip() and not line.strip().startswith("#")]


def test_license_file_holds_the_declared_apache_license(setup_cfg) -> None:
    assert setup_cfg["metadata"]["license"] == "Apache-2.0"
    assert _lines(setup_cfg["metadata"]["license_files"]) == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_ships_py_typed(setup_cfg, package: str) -> None:
    assert (ROOT / package / "py.typed").is_file()
    assert "py.typed" in _lines(setup_cfg["options.package_data"][package])


def test_im2rec_is_a_console_script(setup_cfg) -> None:
    scripts = dict(
        (name.strip(), target.strip())
        for name, target in (line.split("=") for line in _lines(setup_cfg["options.entry_points"]["console_scripts"]))
    )
    module_name, function_name = scripts["lazynd-im2rec"].split(":")
    main = getattr(importlib.import_module(module_name), function_name)
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0


def test_kernel_sources_are_package_data_of_a_discovered_package(setup_cfg) -> None:
    from setuptools import find_namespace_packages

    assert setup_cfg["options"]["packages"].strip() == "find_namespace:"
    find = setup_cfg["options.packages.find"]
    packages = find_namespace_packages(str(ROOT), include=_lines(find["include"]), exclude=_lines(find["exclude"]))
    assert "lazynd.backend.cuda.kernels" in packages
    assert not [p for p in packages if "__pycache__" in p]
    kernels = ROOT / "lazynd" / "backend" / "cuda" / "kernels"
    patterns = _lines(setup_cfg["options.package_data"]["lazynd.backend.cuda.kernels"])
    declared = {path for pattern in patterns for path in kernels.glob(pattern)}
    # the sources and the headers they include when loaded (warp.cuh, elementwise.cuh)
    assert declared and declared == set(kernels.glob("*.cu")) | set(kernels.glob("*.cuh"))
    assert any(path.suffix == ".cuh" for path in declared)


def _tracked_files(folder: str) -> list[str]:
    return sorted(
        str(path.relative_to(ROOT))
        for path in (ROOT / folder).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    )


def test_sdist_manifest_holds_what_the_tests_need(monkeypatch) -> None:
    from setuptools.command.egg_info import FileList

    monkeypatch.chdir(ROOT)
    files = FileList()
    for line in _lines((ROOT / "MANIFEST.in").read_text()):
        files.process_template_line(line)
    included = set(files.files)
    wanted = ["LICENSE", "README.md", "Makefile", "setup.cfg", "setup.py", "pyproject.toml"]
    wanted += _tracked_files("tests") + _tracked_files("bench") + _tracked_files("tutorials")
    assert [name for name in wanted if name not in included] == []
    assert not [name for name in included if name.endswith(".pyc") or "__pycache__" in name]


def test_building_the_packages_gives_no_setuptools_warning(tmp_path: Path) -> None:
    source = tmp_path / "source"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in (*PACKAGES, "setup.py", "setup.cfg", "pyproject.toml", "README.md", "LICENSE", "MANIFEST.in"):
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=ignore)
        else:
            shutil.copy2(path, source / name)
    built = tmp_path / "lib"
    result = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(built)],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "SetuptoolsDeprecationWarning" not in output and "would be ignored" not in output, output
    assert sorted(p.name for p in (built / "lazynd" / "backend" / "cuda" / "kernels").glob("*.cu"))
    for package in PACKAGES:
        assert (built / package / "py.typed").is_file()
