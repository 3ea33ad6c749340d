"""Host-side access to a directory tree that sandboxed code has written.

Nothing here follows a symbolic link or opens a FIFO, socket or device. A path is a relative
path inside `root`; it is opened one component at a time from `root` with O_NOFOLLOW, so a
link anywhere on the way is refused (TreeError naming it), and a file is opened
O_NONBLOCK and used only after fstat shows a regular file. Reads stop at a size cap.

    data = read_bytes(root, "pkg/mod.py", max_bytes=2 ** 20)
    write_text(root, "pkg/new.py", text, create=True)     # parents made, never through a link
    for rel, kind in walk(root, skip=(".git",)): ...   # "dir" | "file" | "link" | "special"
    copy_tree(src, dst, skip=(".git",))    # dst's files become src's (links copied as links)

The tree must not change while it is read (the sandbox that wrote it has exited).
"""
from __future__ import annotations

import hashlib
import os
import shutil
import stat
from collections.abc import Iterator, Sequence

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK = 1 << 20


class TreeError(ValueError):
    """A path that is not a plain file or directory inside the tree, or a file over its cap."""


class _Missing(TreeError):
    pass


def kind_of(mode: int) -> str:
    """"file", "directory", "symbolic link", "FIFO", "socket", "device" of an st_mode."""
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISLNK(mode):
        return "symbolic link"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "device"


def split(rel: str) -> list[str]:
    """The components of a relative path inside the tree; TreeError for an absolute path,
    `..`, or an empty path."""
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if rel.startswith("/") or ".." in parts or not parts:
        raise TreeError(f"path {rel!r} is outside the tree")
    return parts


def _open_dir(root: str, parts: Sequence[str], rel: str, create: bool = False) -> int:
    """A directory fd of root/parts, every component opened without following links."""
    fd = os.open(root, _DIR_FLAGS)
    try:
        for i, name in enumerate(parts):
            if create:
                try:
                    os.mkdir(name, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass
            try:
                nfd = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as e:
                where = "/".join(parts[:i + 1])
                try:
                    kind = kind_of(os.lstat(name, dir_fd=fd).st_mode)
                except FileNotFoundError:
                    raise _Missing(f"{where} does not exist") from e
                raise TreeError(f"{where} is a {kind}, not a directory (opening {rel})") from e
            os.close(fd)
            fd = nfd
        return fd
    except BaseException:
        os.close(fd)
        raise


def lkind(root: str, rel: str) -> str | None:
    """kind_of the entry at rel (not following it), None when absent (or a directory on the
    way is); TreeError when a directory on the way is a link or not a directory."""
    parts = split(rel)
    try:
        fd = _open_dir(root, parts[:-1], rel)
    except _Missing:
        return None
    try:
        return kind_of(os.lstat(parts[-1], dir_fd=fd).st_mode)
    except FileNotFoundError:
        return None
    finally:
        os.close(fd)


def _open_file(root: str, rel: str, flags: int) -> int:
    """An fd of the regular file rel (never a link, FIFO, socket or device)."""
    parts = split(rel)
    dfd = _open_dir(root, parts[:-1], rel)
    try:
        try:
            mode = os.lstat(parts[-1], dir_fd=dfd).st_mode
        except FileNotFoundError:
            raise TreeError(f"{rel} does not exist") from None
        if not stat.S_ISREG(mode):
            raise TreeError(f"{rel} is a {kind_of(mode)}, not a regular file")
        fd = os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
    finally:
        os.close(dfd)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise TreeError(f"{rel} is a {kind_of(st.st_mode)}, not a regular file")
    return fd


def read_bytes(root: str, rel: str, max_bytes: int) -> bytes:
    """The content of the regular file rel; TreeError when it is over max_bytes."""
    fd = _open_file(root, rel, os.O_RDONLY)
    with os.fdopen(fd, "rb") as f:
        size = os.fstat(fd).st_size
        data = f.read(max_bytes + 1) if size <= max_bytes else b""
        if size > max_bytes or len(data) > max_bytes:
            raise TreeError(f"{rel} is {max(size, len(data))} bytes, over the {max_bytes}-byte cap")
    return data


def write_text(root: str, rel: str, text: str, *, create: bool) -> None:
    """Write rel: create=True makes it (and missing parent directories), refusing any
    existing entry, dangling links included; create=False rewrites an existing regular file
    with one link."""
    parts = split(rel)
    if not create:
        fd = _open_file(root, rel, os.O_WRONLY)
        if os.fstat(fd).st_nlink != 1:
            os.close(fd)
            raise TreeError(f"{rel} has several hard links; it is not rewritten")
        os.ftruncate(fd, 0)
    else:
        dfd = _open_dir(root, parts[:-1], rel, create=True)
        try:
            fd = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o644, dir_fd=dfd)
        except FileExistsError:
            kind = kind_of(os.lstat(parts[-1], dir_fd=dfd).st_mode)
            raise TreeError(f"{rel} already exists (a {kind})") from None
        finally:
            os.close(dfd)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)


def remove(root: str, rel: str) -> None:
    """Delete rel (a directory with its content; a link itself, never its target)."""
    parts = split(rel)
    dfd = _open_dir(root, parts[:-1], rel)
    try:
        try:
            mode = os.lstat(parts[-1], dir_fd=dfd).st_mode
        except FileNotFoundError:
            return
        if stat.S_ISDIR(mode):
            shutil.rmtree(parts[-1], dir_fd=dfd)      # fd-based: does not follow links
        else:
            os.unlink(parts[-1], dir_fd=dfd)
    finally:
        os.close(dfd)


def walk(root: str, skip: Sequence[str] = ()) -> Iterator[tuple[str, str]]:
    """(relative path, "dir" | "file" | "link" | "special") of every entry under root, sorted
    by name, a directory before its content; links are not entered, entries named in
    `skip` (at any depth) are left out, and a directory that cannot be listed or an entry
    that cannot be stat'ed is "special"."""
    def listing(path: str) -> list[os.DirEntry] | None:
        try:
            with os.scandir(path) as it:
                return sorted(it, key=lambda e: e.name)
        except OSError:
            return None

    def rec(rel: str, entries: list[os.DirEntry]) -> Iterator[tuple[str, str]]:
        for e in entries:
            sub = f"{rel}/{e.name}" if rel else e.name
            if e.name in skip:
                continue
            try:
                mode = e.stat(follow_symlinks=False).st_mode
            except OSError:
                yield sub, "special"
                continue
            if stat.S_ISDIR(mode):
                inner = listing(os.path.join(root, sub))
                if inner is None:
                    yield sub, "special"
                    continue
                yield sub, "dir"
                yield from rec(sub, inner)
            elif stat.S_ISLNK(mode):
                yield sub, "link"
            elif stat.S_ISREG(mode):
                yield sub, "file"
            else:
                yield sub, "special"
    top = listing(root)
    if top is None:
        raise TreeError(f"{root} cannot be listed")
    yield from rec("", top)


def file_digest(root: str, rel: str) -> bytes:
    """SHA-256 of the regular file rel, read in chunks."""
    h = hashlib.sha256()
    with os.fdopen(_open_file(root, rel, os.O_RDONLY), "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.digest()


def copy_tree(src: str, dst: str, skip: Sequence[str] = ()) -> list[str]:
    """Make dst's content src's: every entry of dst not named in `skip` at its top is
    removed, then src's directories (0755) and regular files are copied (mode 0644, or 0755 when
    the owner may execute: no setuid/setgid/sticky bits), links are recreated as links with
    the same text (never followed) and entries named in `skip` (at any depth) are left out.
    FIFOs, sockets, devices and what cannot be read are not copied; their paths are
    returned."""
    for name in os.listdir(dst):
        if name not in skip:
            remove(dst, name)
    left_out = []
    for rel, kind in walk(src, skip):
        parts = split(rel)
        if kind == "special":
            left_out.append(rel)
            continue
        if kind == "dir":
            os.close(_open_dir(dst, parts, rel, create=True))
            continue
        dfd = _open_dir(dst, parts[:-1], rel, create=True)
        try:
            if kind == "link":
                sfd = _open_dir(src, parts[:-1], rel)
                try:
                    target = os.readlink(parts[-1], dir_fd=sfd)
                finally:
                    os.close(sfd)
                os.symlink(target, parts[-1], dir_fd=dfd)
                continue
            try:
                fd = _open_file(src, rel, os.O_RDONLY)
            except OSError:
                left_out.append(rel)
                continue
            with os.fdopen(fd, "rb") as fin:
                mode = 0o755 if os.fstat(fin.fileno()).st_mode & stat.S_IXUSR else 0o644
                out = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                              | os.O_CLOEXEC, mode, dir_fd=dfd)
                with os.fdopen(out, "wb") as fout:
                    shutil.copyfileobj(fin, fout, _CHUNK)
        finally:
            os.close(dfd)
    return left_out
