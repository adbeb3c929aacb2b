"""The numba cache guard (mjenv/vector/cache.py): stale machine code is dropped when a source changes."""

from __future__ import annotations

from pathlib import Path

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
