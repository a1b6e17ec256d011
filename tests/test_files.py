"""benchkill.files: new files never replace anything, with hard links and without."""

from __future__ import annotations

import errno
import os

import pytest

from benchkill import files


def _source(tmp_path, text="new bytes", mode=0o640):
    source = tmp_path / "source.bin"
    source.write_text(text)
    source.chmod(mode)
    return source


@pytest.fixture(params=["hard links", "no hard links"])
def link_support(request, monkeypatch):
    """Each test runs on this file system as it is, and as one without hard links (os.link
    fails as on vfat; the tests' files are real)."""
    if request.param == "no hard links":

        def no_link(source, target, **_):
            raise OSError(errno.EPERM, "Operation not permitted")

        monkeypatch.setattr(files.os, "link", no_link)
    return request.param


@pytest.mark.parametrize(
    "create", [files.place_new, files.copy_new, files.link_or_copy_new], ids=lambda f: f.__name__
)
def test_a_new_file_gets_the_bytes_and_the_mode(tmp_path, link_support, create):
    source = _source(tmp_path)
    target = tmp_path / "out" / "lib.so"
    target.parent.mkdir()
    create(source, target)
    assert target.read_text() == "new bytes"
    assert target.stat().st_mode & 0o777 == 0o640
    assert source.read_text() == "new bytes"  # the source stays
    linked = os.path.samefile(source, target)
    assert linked == (link_support == "hard links" and create is not files.copy_new)
    # no hidden copy is left next to the target
    assert [p.name for p in target.parent.iterdir()] == ["lib.so"]


@pytest.mark.parametrize(
    "create", [files.place_new, files.copy_new, files.link_or_copy_new], ids=lambda f: f.__name__
)
@pytest.mark.parametrize("existing", ["file", "dangling link", "directory"])
def test_nothing_there_is_ever_replaced(tmp_path, link_support, create, existing):
    source = _source(tmp_path)
    target = tmp_path / "lib.so"
    if existing == "file":
        target.write_text("the user's file")
    elif existing == "dangling link":
        target.symlink_to(tmp_path / "nowhere")
    else:
        target.mkdir()
    with pytest.raises(FileExistsError):
        create(source, target)
    if existing == "file":
        assert target.read_text() == "the user's file"
    elif existing == "dangling link":
        assert target.is_symlink() and not (tmp_path / "nowhere").exists()
    else:
        assert target.is_dir() and not list(target.iterdir())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lib.so", "source.bin"]


def test_link_new_tells_a_file_system_without_hard_links(tmp_path, link_support):
    source = _source(tmp_path)
    made = files.link_new(source, tmp_path / "linked")
    assert made == (link_support == "hard links")
    assert (tmp_path / "linked").exists() == made


def test_a_failed_copy_leaves_no_partial_file(tmp_path, monkeypatch):
    """Without hard links the target is created first, then written: if the write fails,
    the partial file is removed (it is ours: O_EXCL made it)."""
    source = _source(tmp_path)
    target = tmp_path / "lib.so"

    def fail(src, dst, *args):
        dst.write(b"half")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files.shutil, "copyfileobj", fail)
    with pytest.raises(OSError, match="No space"):
        files.copy_exclusive(source, target)
    assert not target.exists()
