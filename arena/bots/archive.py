"""Uploaded bot archives (``.tar.gz``, ``.tgz``, ``.tar`` or ``.zip``): unpacked
into a fresh folder within limits, or refused with one line saying why.

Refused: an archive over :attr:`Limits.archive_bytes`; more than
:attr:`Limits.files` entries; a path deeper than :attr:`Limits.depth`; more than
:attr:`Limits.unpacked_bytes` unpacked (a decompression bomb stops at the limit,
not at its end); an absolute path or one escaping the folder (``..``); a link
pointing out of the folder or anywhere absolute; a device file, FIFO or other
special file; no ``bot.toml`` at the top (or in the one top-level folder); a bad
``bot.toml``.  Tar archives are checked by the standard library's ``data``
extraction filter (PEP 706); zip entries by the same rules here, since
:mod:`zipfile` has no such filter.
"""

from __future__ import annotations

import io
import os
import posixpath
import shutil
import stat
import tarfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from arena.bots.paths import PathEscape, contained
from arena.bots.paths import inside as is_inside
from arena.bots.versions import MANIFEST, BotError, Manifest, read_manifest

#: Copying a zip member: bytes per read.
CHUNK = 1 << 16


class ArchiveError(BotError):
    """An archive refused; the message says why in one line."""


@dataclass(frozen=True)
class Limits:
    """What an upload may be: bytes as sent, bytes unpacked, entries, path depth."""

    archive_bytes: int = 10 * 2**20
    unpacked_bytes: int = 50 * 2**20
    files: int = 2000
    depth: int = 16


def unpack(data: bytes, filename: str, target: Path,
           limits: Limits = Limits()) -> tuple[Path, Manifest]:
    """Unpack the archive ``data`` (its kind from ``filename``) into ``target`` (made
    here; removed again if refused); the bot's directory in it and its manifest."""
    if len(data) > limits.archive_bytes:
        raise ArchiveError(f"the archive is {len(data)} bytes; the limit is "
                           f"{limits.archive_bytes}")
    target.mkdir(parents=True)
    try:
        if filename.lower().endswith(".zip"):
            _unzip(data, target, limits)
        elif filename.lower().endswith((".tar.gz", ".tgz", ".tar")):
            _untar(data, target, limits)
        else:
            raise ArchiveError(f"{filename!r} is not a .tar.gz, .tgz, .tar or .zip archive")
        directory = bot_directory(target)
        return directory, read_manifest(directory)
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise


def bot_directory(root: Path) -> Path:
    """Where ``bot.toml`` is: ``root``, or its one top-level folder."""
    if (root / MANIFEST).is_file():
        return root
    entries = list(root.iterdir())
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink() \
            and (entries[0] / MANIFEST).is_file():
        return entries[0]
    raise ArchiveError(f"no {MANIFEST} at the top of the archive (or in its one "
                       f"top-level folder)")


def _check_path(name: str, limits: Limits) -> str:
    """``name`` normalised; ArchiveError if absolute, escaping or too deep."""
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        raise ArchiveError(f"{name!r} is an absolute path")
    clean = posixpath.normpath(name.replace("\\", "/"))
    if clean == ".." or clean.startswith("../"):
        raise ArchiveError(f"{name!r} points out of the bot's folder")
    if clean.count("/") + 1 > limits.depth:
        raise ArchiveError(f"{name!r} is nested deeper than {limits.depth} folders")
    return clean


def _inside(target: Path, name: str, member: str) -> Path:
    """Where ``name`` is in ``target``, links already unpacked followed;
    ArchiveError naming ``member`` if that is outside."""
    try:
        return contained(target, name)
    except PathEscape:
        raise ArchiveError(f"{member!r} points out of the bot's folder") from None


def _count(entries: int, limits: Limits) -> None:
    if entries > limits.files:
        raise ArchiveError(f"the archive holds more than {limits.files} entries")


def _too_big(limits: Limits) -> ArchiveError:
    return ArchiveError(f"the archive unpacks to more than {limits.unpacked_bytes} bytes "
                        f"(a decompression bomb?)")


def _untar(data: bytes, target: Path, limits: Limits) -> None:
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
            members, total = [], 0
            for member in tar:
                members.append(member)
                _count(len(members), limits)
                _check_path(member.name, limits)
                if member.isdev() or member.isfifo():
                    raise ArchiveError(f"{member.name!r} is a device file or FIFO")
                total += member.size
                if total > limits.unpacked_bytes:
                    raise _too_big(limits)
                try:
                    tarfile.data_filter(member, str(target))
                except tarfile.LinkOutsideDestinationError:
                    raise ArchiveError(f"link {member.name!r} points out of the bot's "
                                       f"folder") from None
                except tarfile.AbsoluteLinkError:
                    raise ArchiveError(f"link {member.name!r} points to an absolute "
                                       f"path") from None
                except tarfile.FilterError as exc:
                    raise ArchiveError(f"{member.name!r} is refused: {exc}") from None
            tar.extractall(target, members=members, filter="data")
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise ArchiveError(f"not a readable tar archive: {exc}") from None


def _unzip(data: bytes, target: Path, limits: Limits) -> None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
            _count(len(infos), limits)
            for info in infos:
                _check_path(info.filename, limits)
                kind = stat.S_IFMT(info.external_attr >> 16)
                if kind and kind not in (stat.S_IFREG, stat.S_IFDIR, stat.S_IFLNK):
                    raise ArchiveError(f"{info.filename!r} is a device file or FIFO")
            total = 0
            for info in infos:
                total = _unzip_one(archive, info, target, total, limits)
    except zipfile.BadZipFile as exc:
        raise ArchiveError(f"not a readable zip archive: {exc}") from None
    except (OSError, EOFError, zlib.error, NotImplementedError) as exc:
        raise ArchiveError(f"cannot unpack the zip archive: {exc}") from None


def _unzip_one(archive: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path, total: int,
               limits: Limits) -> int:
    """Write one zip entry (a folder, a file streamed within the size limit, or a
    link that stays inside); the running total of bytes unpacked."""
    name = _check_path(info.filename, limits)
    if name == ".":
        return total
    path = _inside(target, name, info.filename)
    if info.is_dir():
        path.mkdir(parents=True, exist_ok=True)
        return total
    path.parent.mkdir(parents=True, exist_ok=True)
    if stat.S_IFMT(info.external_attr >> 16) == stat.S_IFLNK:
        link = archive.read(info)[:4096].decode(errors="replace")
        inside = posixpath.normpath(posixpath.join(posixpath.dirname(name), link))
        if link.startswith("/") or inside == ".." or inside.startswith("../"):
            raise ArchiveError(f"link {info.filename!r} points out of the bot's folder")
        if not is_inside(target, path.parent / link):  # through links written before
            raise ArchiveError(f"link {info.filename!r} points out of the bot's folder")
        os.symlink(link, path)
        return total
    with archive.open(info) as source, open(path, "wb") as sink:
        while chunk := source.read(CHUNK):
            total += len(chunk)
            if total > limits.unpacked_bytes:
                raise _too_big(limits)
            sink.write(chunk)
    return total
