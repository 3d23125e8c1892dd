"""Signing people in to the web app with Supabase Auth (when SUPABASE_URL and SUPABASE_ANON_KEY are set).

This is where a Supabase client is the right tool: it speaks the project's Auth API for us. The
flow is an emailed one-time code, which needs no browser JavaScript and no state between the two
steps, so any web process can serve either step:

1. `send_code(email)` — Supabase emails a 6-digit code (creating the Supabase user if new);
2. `verify_code(email, code)` — returns the user's Supabase access token.

`navmcp web` offers it at `/login/email` and `/login/code` (`navmcp.web.signin`): the access
token is verified once, like any token (`App.authenticate`, navmcp/identity/supabase_auth.py, which creates
the navmcp user on first sight), and is not kept: the person gets a cookie session of navmcp's own.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from navmcp.errors import AuthError


@dataclass(frozen=True)
class SupabaseSignIn:
    url: str
    anon_key: str

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> SupabaseSignIn | None:
        env = os.environ if environ is None else environ
        url, key = env.get("SUPABASE_URL"), env.get("SUPABASE_ANON_KEY")
        return cls(url.rstrip("/"), key) if url and key else None

    def _client(self):
        # A fresh client per step: no session is kept in this process (any process serves any step).
        from supabase import ClientOptions, create_client

        return create_client(self.url, self.anon_key,
                             options=ClientOptions(auto_refresh_token=False, persist_session=False))

    def send_code(self, email: str) -> None:
        from supabase_auth.errors import AuthError as SupabaseError

        try:
            self._client().auth.sign_in_with_otp({"email": email, "options": {"should_create_user": True}})
        except SupabaseError as e:
            raise AuthError(f"could not send a sign-in code to {email}: {e.message}") from None

    def verify_code(self, email: str, code: str) -> str:
        """The Supabase access token for a correct code; `AuthError` with Supabase's reason otherwise."""
        from supabase_auth.errors import AuthError as SupabaseError

        try:
            response = self._client().auth.verify_otp({"email": email, "token": code.strip(), "type": "email"})
        except SupabaseError as e:
            raise AuthError(f"sign-in code not accepted: {e.message}") from None
        if response.session is None:
            raise AuthError("sign-in code not accepted: Supabase returned no session")
        return response.session.access_token
