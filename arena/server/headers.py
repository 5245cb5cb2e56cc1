"""The headers every response of the server carries (docs/server.md, "Headers"),
added by one ASGI middleware outside everything else, so that pages, the API,
static files, errors, redirects, 304s and the kept pages answered before any
routing all carry them.

A response that does not say how it may be kept is ``Cache-Control:
no-store``: only what a handler declares shared (the kept pages' ``no-cache``
with their ETag, the static files) is kept by browsers and proxies; whatever a
signed-in viewer, a token or a form's CSRF token shaped is never stored.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: Only the site itself: its own scripts (no inline ones), styles and images
#: (``data:`` for the empty favicon), no plugins, no <base>, forms posted only to
#: itself, and no other page may frame it.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")

#: Sent with every response.
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    # frame-ancestors' older twin, for browsers without CSP level 2
    "X-Frame-Options": "DENY",
    # a response is only what its Content-Type says: JSON never runs as a script
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    # no other origin (another port of the same host included) may load a
    # response by <script>, <img> or no-cors fetch, cookies or not
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}

#: How a response that does not say is kept: not at all.
UNDECLARED_CACHE = "no-store"

_ADDED = [(name.lower().encode("latin-1"), value.encode("latin-1"))
          for name, value in SECURITY_HEADERS.items()]
_REPLACED = {name for name, _ in _ADDED}
_CACHE_CONTROL = b"cache-control"


def with_security_headers(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """``headers`` (an ASGI response's) with :data:`SECURITY_HEADERS` in place of
    any of theirs, and ``Cache-Control: no-store`` unless they set one."""
    kept = [(name, value) for name, value in headers if name.lower() not in _REPLACED]
    if not any(name.lower() == _CACHE_CONTROL for name, _ in kept):
        kept.append((_CACHE_CONTROL, UNDECLARED_CACHE.encode("latin-1")))
    return kept + _ADDED


class SecurityHeaders:
    """ASGI middleware adding :data:`SECURITY_HEADERS` to every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_guarded(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message,
                           "headers": with_security_headers(list(message.get("headers", [])))}
            await send(message)

        await self.app(scope, receive, send_guarded)
