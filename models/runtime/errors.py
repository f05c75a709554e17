"""Errors that carry a message meant for the person using Hark (never a traceback)."""


class HarkError(Exception):
    """A failure with a clear, user-facing message and, where known, what to do about it."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n  → {self.hint}" if self.hint else self.message


class ModelLoadError(HarkError):
    """A model's weights could not be loaded (offline without cache, corrupt files, …)."""
