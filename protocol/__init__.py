"""Five Arena's wire protocol and Python bot SDK (see docs/protocol.md)."""

from protocol.sdk import Bot, Request, run

__all__ = ["Bot", "Request", "run"]
