"""How large a request's body may be: an upload's archive with its form, or a
small form or JSON body for everything else.  Checked as the body arrives
(:class:`BodyLimit`), so neither a declared ``Content-Length`` nor a chunked body
that never ends makes the server hold or spool more than the limit."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: Bytes of a body that is not an upload: a sign-in form, a token's label, JSON.
FORM_BYTES = 64 * 1024
#: Bytes of an upload's body besides the archive: its other form fields, the boundaries.
FORM_OVERHEAD = 64 * 1024
#: The paths that take an archive.
UPLOAD_PATHS = frozenset({"/upload", "/api/submissions"})


def body_limit(path: str, archive_bytes: int) -> int:
    """The most bytes a request's body to ``path`` may hold."""
    return archive_bytes + FORM_OVERHEAD if path in UPLOAD_PATHS else FORM_BYTES


def too_large(limit: int) -> HTTPException:
    return HTTPException(413, f"the request's body is larger than {limit} bytes")


class BodyLimit:
    """ASGI middleware: a request whose body is (or says it is) larger than
    :func:`body_limit` is answered 413 when its handler reads the body, before
    more than the limit was read; handlers see the error as they read."""

    def __init__(self, app: ASGIApp, archive_bytes: int) -> None:
        self.app, self.archive_bytes = app, archive_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = body_limit(scope["path"], self.archive_bytes)
        declared = dict(scope["headers"]).get(b"content-length", b"")
        # A declared length is kept to by the HTTP layer: only a chunked body is counted.
        counting = not declared.isdigit()
        seen = 0 if counting else int(declared) if len(declared) <= 18 else limit + 1

        async def receive_within() -> Message:
            nonlocal seen
            if seen > limit:
                raise too_large(limit)
            message = await receive()
            if message["type"] == "http.request" and counting:
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise too_large(limit)
            return message

        await self.app(scope, receive_within, send)
