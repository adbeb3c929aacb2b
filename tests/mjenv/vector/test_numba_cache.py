"""The numba cache guard (mjenv/vector/cache.py): stale machine code is dropped when a source changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from mjenv.vector.cache import drop_stale_cache


def _cache_files(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "__pycache__").glob("*.nb?"))


def test_cache_is_kept_while_sources_stay_and_dropped_when_one_changes(tmp_path: Path) -> None:
    root, other = tmp_path / "pkg", tmp_path / "dep"
    (root / "__pycache__").mkdir(parents=True)
    other.mkdir()
    src, dep = root / "engine.py", other / "rules.py"
    src.write_text("A = 1\n")
    dep.write_text("B = 2\n")
    sources = [src, dep]
    assert drop_stale_cache(root, sources)  # no stamp yet: whatever is cached is of unknown sources
    for name in ("f-1.py311.nbi", "f-1.py311.1.nbc"):
        (root / "__pycache__" / name).write_bytes(b"machine code")
    assert not drop_stale_cache(root, sources)
    assert _cache_files(root) == ["f-1.py311.1.nbc", "f-1.py311.nbi"]
    dep.write_text("B = 3\n")  # a file the cached functions only import from
    assert drop_stale_cache(root, sources)
    assert _cache_files(root) == []
    assert not drop_stale_cache(root, sources)


def test_the_compiled_agents_are_guarded_by_the_engine_sources() -> None:
    import agents.compiled
    import mjenv.vector

    stamp = Path(agents.compiled.__file__).parent / "__pycache__" / "numba-sources.sha1"
    assert stamp.is_file() and len(stamp.read_text()) == 40
    assert (Path(mjenv.vector.__file__).parent / "__pycache__" / "numba-sources.sha1").is_file()


def test_the_first_compile_is_announced_once_with_the_cache_folder(capsys) -> None:
    import numba

    from mjenv.vector.cache import announce_first_compile

    notice = announce_first_compile()
    assert announce_first_compile() is notice  # registered once, however often asked
    told, notice.told = notice.told, False
    try:
        def probe(x: int) -> int:
            return x + 1

        probe.__module__ = "mjenv.vector.probe"  # as if it were one of the engine's functions
        assert numba.njit(probe)(1) == 2 and numba.njit(lambda x: x * 2)(2) == 4
        lines = capsys.readouterr().err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("mjenv: compiling the batched engine and agents (numba)") and "mjenv warmup" in lines[0]
        assert "minutes" in lines[0] and "cache in " in lines[0]

        def again(x: int) -> int:
            return x - 1

        again.__module__ = "mjenv.vector.probe"
        assert numba.njit(again)(1) == 0 and capsys.readouterr().err == ""  # one line per process
    finally:
        notice.told = told


@pytest.mark.slow  # loads (or compiles) the engine and heuristics in three fresh processes
def test_after_mjenv_warmup_a_new_process_compiles_nothing() -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "mjenv", "warmup", "--game", "blood_battle"], capture_output=True,
                          text=True, timeout=1800, check=True)
    assert "later processes load the compiled code from" in done.stdout, done.stdout
    code = ("import gymnasium, mjenv\n"
            "env = gymnasium.make_vec('mjenv/BloodBattle-v0', num_envs=4, opponents='heuristic', num_threads=2)\n"
            "obs, info = env.reset(seed=0)\n"
            "env.step(info['action_mask'].argmax(axis=1))\n"
            "from agents.arena import run_arena\n"
            "run_arena(agents=['heuristic', 'random'], deals=1, progress=False)\n")
    cold = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=1800, check=True)
    assert "mjenv: compiling" not in cold.stderr, cold.stderr
