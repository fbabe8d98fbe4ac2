"""Installs by need: the rules core and ``smj``'s text commands run with none of the extras' packages
installed, and a command that needs an extra says which one instead of a traceback."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import smj

ROOT = Path(__file__).resolve().parents[2]

# a Python whose import system finds none of the extras' packages: as after 'pip install' of the core alone
WITHOUT_EXTRAS = textwrap.dedent(
    """
    import sys
    from importlib.abc import MetaPathFinder

    BLOCKED = set(sys.argv[1].split(","))

    class NotInstalled(MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NotInstalled())
    sys.argv = ["smj", *sys.argv[2:]]
    import smj
    code = smj.main()
    leaked = sorted(BLOCKED & {m.split(".")[0] for m in sys.modules})
    print("LEAKED", leaked)
    sys.exit(code)
    """
)


def _run_without_extras(*argv: str) -> subprocess.CompletedProcess[str]:
    blocked = ",".join(smj.EXTRA_OF)
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_EXTRAS, blocked, *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_rules_commands_run_with_no_extra_installed() -> None:
    scored = _run_without_extras("score", "--hand", "123345m66999p", "--kong", "2p", "--win", "6p", "--json")
    assert scored.returncode == 0, scored.stderr
    assert '"total_fan"' in scored.stdout and "LEAKED []" in scored.stdout
    waits = _run_without_extras("waits", "--hand", "12334567m66999p")
    assert waits.returncode == 0 and "LEAKED []" in waits.stdout
    settled = _run_without_extras("settle", "examples/round.json", "--json")
    assert settled.returncode == 0, settled.stderr


def test_a_command_that_needs_an_extra_names_it() -> None:
    detect = _run_without_extras("detect", "examples/hand_phone.jpg")
    assert detect.returncode == 2
    assert 'which the [vision] extra installs: pip install "sichuan-mahjong-scorer[vision]"' in detect.stderr
    assert "Traceback" not in detect.stderr
    sets = _run_without_extras("set", "list")
    assert sets.returncode == 2 and "[store] extra" in sets.stderr


def test_the_core_installs_nothing_and_every_extra_is_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["dependencies"] == []
    extras = project["optional-dependencies"]
    assert set(smj.EXTRA_OF.values()) <= set(extras)
    assert {"vision", "store", "datasets", "serve", "all"} <= set(extras)
