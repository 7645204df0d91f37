"""requirements.lock (the exact environment `make` installs) matches pyproject.toml."""

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
LOCK = (ROOT / "requirements.lock").read_text()


def declared() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    return [Requirement(r) for r in [*project["dependencies"], *extras["book"], *extras["dev"]]]


def pinned() -> dict[str, str]:
    return {
        canonicalize_name(name): version
        for name, version in re.findall(r"^([A-Za-z0-9_.\-]+)==(\S+)", LOCK, re.M)
    }


def torch_version() -> str:
    return re.search(r"^TORCH_VERSION \?= (\S+)", (ROOT / "Makefile").read_text(), re.M)[1]


def test_every_declared_dependency_is_pinned_within_its_bounds():
    pins = pinned()
    for req in declared():
        name = canonicalize_name(req.name)
        if name == "torch":  # pinned by the Makefile: a CPU wheel here, CUDA on a GPU runner
            assert req.specifier.contains(torch_version()), (req, torch_version())
            continue
        assert name in pins, f"{req.name} is declared in pyproject.toml but not locked: make lock"
        assert req.specifier.contains(pins[name], prereleases=True), (
            f"{req.name}=={pins[name]} in the lock violates pyproject's {req}: make lock"
        )


def test_every_pin_is_exact_and_hashed():
    entries = re.split(r"\n(?=[A-Za-z0-9])", LOCK)
    packages = [e for e in entries if "==" in e.split("\n", 1)[0]]
    assert len(packages) == len(pinned()) > 100
    for entry in packages:
        assert "--hash=sha256:" in entry, entry.split("\n", 1)[0]


def test_torch_is_left_to_the_makefile():
    assert "torch" not in pinned()
    assert re.search(r"^# torch$", LOCK, re.M)
