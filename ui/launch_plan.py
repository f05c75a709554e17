"""How the app is served: address, port, share link and the login it then requires.

Pure and testable without starting a server or a tunnel: a shared (public) app, or one bound to a
non-loopback address, always gets a login — from the configured environment variables, or a
generated password printed once at start-up. Never an open public link.
"""

from __future__ import annotations

import ipaddress
import secrets
from collections.abc import Mapping
from dataclasses import dataclass

from assistant.config import UISettings

DEFAULT_USER = "hark"


@dataclass(frozen=True)
class LaunchPlan:
    host: str
    port: int | None  # None → let Gradio pick
    share: bool
    auth: tuple[str, str] | None
    generated_password: bool = False

    @property
    def login_required(self) -> bool:
        return self.auth is not None

    def kwargs(self) -> dict:
        """Keyword arguments for `gr.Blocks.launch` (without the UI-specific ones)."""
        return {
            "server_name": self.host,
            "server_port": self.port,
            "share": self.share,
            "auth": [self.auth] if self.auth else None,
        }

    def __repr__(self) -> str:  # never print the password by accident
        user = self.auth[0] if self.auth else None
        return f"LaunchPlan(host={self.host!r}, port={self.port!r}, share={self.share}, user={user!r})"


def is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def launch_plan(
    ui: UISettings, share: bool, host: str | None, port: int | None, env: Mapping[str, str]
) -> LaunchPlan:
    host = host or ui.host
    chosen_port = ui.port if port is None else port
    public = share or not is_loopback(host)
    if not public:
        return LaunchPlan(host=host, port=chosen_port or None, share=False, auth=None)
    user = (env.get(ui.share_user_env) or "").strip() or DEFAULT_USER
    password = (env.get(ui.share_password_env) or "").strip()
    generated = not password
    if generated:
        password = secrets.token_urlsafe(12)
    return LaunchPlan(
        host=host, port=chosen_port or None, share=share, auth=(user, password), generated_password=generated
    )
