"""What the page and API handlers share: the viewer of a request (and the
private site's sign-in rule), the owner checks that make someone else's bot,
game seat or submission a 404, and reading an uploaded archive within its limit."""

from __future__ import annotations

from pathlib import Path

from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request

from arena.server.auth import Viewer, viewer_of
from arena.server.state import Server
from arena.store.accounts import Submission

#: The server's own templates (its pages extend ``layout.html``) and ``live.js``.
TEMPLATES = Path(__file__).with_name("templates")


def server_of(request: Request) -> Server:
    server: Server = request.app.state.server
    return server


def viewer(request: Request, *, public: bool = False) -> Viewer:
    """The request's viewer; on a private site 401 unless signed in (``public``:
    a page anyone reaches, such as signing in)."""
    server = server_of(request)
    found = viewer_of(request, server.accounts)
    if server.settings.private and not public and found.user is None:
        raise HTTPException(401, "this site is private: sign in to see it")
    return found


def own_submission(request: Request, who: Viewer, submission_id: int) -> Submission:
    """The submission if ``who`` may see it (its uploader, an admin), else 404."""
    found = server_of(request).accounts.submission(submission_id)
    if found is None or not who.may_manage(found.user_id):
        raise HTTPException(404, f"no submission {submission_id}")
    return found


def owned_seats(request: Request, who: Viewer, seats: list[str],
                bases: dict[str, str]) -> list[int]:
    """The seats of a game whose bot ``who`` may manage."""
    if who.user is None:
        return []
    accounts = server_of(request).accounts
    owners = {base: accounts.owner(base) for base in {bases.get(s, s) for s in seats}}
    return [seat for seat, label in enumerate(seats)
            if who.may_manage(owners[bases.get(label, label)])]


async def read_archive(upload: object, limit: int) -> tuple[bytes, str]:
    """The bytes and file name of an uploaded archive field; 400 if it is not a
    file, 413 if larger than ``limit``."""
    if not isinstance(upload, UploadFile):
        raise HTTPException(400, "no archive: send the bot's .tar.gz or .zip as the "
                                 "'archive' file field")
    data = await upload.read(limit + 1)
    if len(data) > limit:
        raise HTTPException(413, f"the archive is larger than {limit} bytes")
    return data, (upload.filename or "upload")[:200]
