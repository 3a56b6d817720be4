"""Errors of the world: one hierarchy, each message a single clear paragraph."""

from __future__ import annotations


class WorldError(Exception):
    """Base of every error the world raises (tools never raise: they return results)."""


class FixtureError(WorldError):
    """A fixture or override file is malformed (the message names the file and the record)."""


class WorldExists(WorldError, FileExistsError):
    """The build's target folder already holds a world and ``replace`` was not given."""


class WorldRefused(WorldError):
    """A world folder may not be used: no marker, or it changed since it was built."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
