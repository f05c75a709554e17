"""A shared or non-loopback app always requires a login; a local one does not; no password leaks
through repr."""

from __future__ import annotations

from assistant.config import UISettings
from ui.launch_plan import is_loopback, launch_plan


def test_local_app_needs_no_login():
    plan = launch_plan(UISettings(), share=False, host=None, port=None, env={})
    assert plan.host == "127.0.0.1" and plan.port == 7860 and not plan.share
    assert plan.auth is None and plan.kwargs()["auth"] is None


def test_share_always_requires_login_with_a_generated_password():
    a = launch_plan(UISettings(), share=True, host=None, port=8000, env={})
    b = launch_plan(UISettings(), share=True, host=None, port=8000, env={})
    assert a.share and a.login_required and a.generated_password
    user, password = a.auth
    assert user == "hark" and len(password) >= 16
    assert password != b.auth[1]  # generated fresh, not a constant
    assert a.kwargs()["auth"] == [(user, password)] and a.kwargs()["share"] is True
    assert password not in repr(a)


def test_share_credentials_come_from_the_configured_environment_variables():
    ui = UISettings(share_user_env="MY_USER", share_password_env="MY_PW")
    plan = launch_plan(ui, share=True, host=None, port=None, env={"MY_USER": "ana", "MY_PW": "s3cret-pass"})
    assert plan.auth == ("ana", "s3cret-pass") and not plan.generated_password
    # the default names are not read when others are configured
    plan = launch_plan(ui, share=True, host=None, port=None, env={"HARK_USER": "x", "HARK_PASSWORD": "y"})
    assert plan.auth[0] == "hark" and plan.generated_password


def test_binding_beyond_loopback_also_requires_login():
    assert launch_plan(UISettings(), share=False, host="0.0.0.0", port=None, env={}).login_required
    assert not launch_plan(UISettings(), share=False, host="localhost", port=None, env={}).login_required
    assert is_loopback("::1") and is_loopback("127.0.0.2") and not is_loopback("192.168.1.5")
