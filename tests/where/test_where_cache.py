"""The image cache: a complete build is reused, an interrupted one is redone, a new recipe
replaces the old build."""

from __future__ import annotations

import pytest

from where import cache


@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "CACHE_ROOT", tmp_path)
    return tmp_path


def test_a_complete_build_is_reused(cache_root):
    builds = []
    build = lambda folder: builds.append(folder) or (folder / "disk.img").write_text("x")  # noqa: E731
    first = cache.cached_build("vm", "aaaa", build)
    again = cache.cached_build("vm", "aaaa", build)
    assert first == again == cache_root / "vm-aaaa" and len(builds) == 1
    assert (first / "ready").exists()


def test_an_interrupted_build_is_redone_from_scratch(cache_root):
    def interrupted(folder):
        (folder / "half.img").write_text("x")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        cache.cached_build("vm", "aaaa", interrupted)
    folder = cache.cached_build("vm", "aaaa", lambda f: (f / "disk.img").write_text("x"))
    assert sorted(p.name for p in folder.iterdir()) == ["disk.img", "ready"]


def test_a_new_recipe_replaces_the_old_build(cache_root):
    cache.cached_build("vm", "aaaa", lambda f: None)
    cache.cached_build("docker-base", "cccc", lambda f: None)
    cache.cached_build("vm", "bbbb", lambda f: None)
    assert sorted(p.name for p in cache_root.iterdir() if p.is_dir()) == ["docker-base-cccc", "vm-bbbb"]


def test_the_key_changes_with_any_part_of_the_recipe():
    assert cache.recipe_key("bookworm", "bubblewrap") != cache.recipe_key("bookworm", "bubblewrap", "python3")
    assert cache.recipe_key("ab", "c") != cache.recipe_key("a", "bc")
    assert cache.recipe_key(b"x") == cache.recipe_key("x")
