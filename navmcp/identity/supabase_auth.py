"""Supabase Auth access tokens as navmcp identities.

A Supabase project signs its users' access tokens either with the project's JWT secret (HS256,
`SUPABASE_JWT_SECRET`) or with asymmetric keys published at
`{SUPABASE_URL}/auth/v1/.well-known/jwks.json` (RS256/ES256, fetched with pyjwt's `PyJWKClient`).
Either way the audience is "authenticated" and `sub` is the user's uuid. The first time navmcp
sees a Supabase user it creates a navmcp user whose id *is* that uuid (so `auth.uid()` and
navmcp's row-level policies name the same person) and whose handle comes from the user's
metadata or the part of their email before the '@', made unique. Their name is never their email
address, and they are not findable (nobody can add them to a studio) until they choose to be.
"""

from __future__ import annotations

import re
from typing import Any

import jwt

from navmcp.errors import AuthError, NavError, echo
from navmcp.identity import AUDIENCE as NAVMCP_AUDIENCE, HANDLE_RE, check_name, create_user, user_by_id
from navmcp.store import Row, Store

AUDIENCE = "authenticated"
ASYMMETRIC = ("RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "EdDSA")


class SupabaseAuth:
    def __init__(self, jwt_secret: str | None = None, url: str | None = None, audience: str = AUDIENCE):
        if not jwt_secret and not url:
            raise ValueError("SupabaseAuth needs SUPABASE_JWT_SECRET, SUPABASE_URL, or both")
        self.secret = jwt_secret.encode() if jwt_secret else None
        self.url = url.rstrip("/") if url else None
        self.audience = audience
        self.issuer = f"{self.url}/auth/v1" if self.url else None
        self.jwks = (jwt.PyJWKClient(f"{self.issuer}/.well-known/jwks.json", cache_keys=True, lifespan=600)
                     if self.url else None)

    @classmethod
    def from_config(cls, jwt_secret: str | None, url: str | None) -> SupabaseAuth | None:
        return cls(jwt_secret, url) if (jwt_secret or url) else None

    def claims_token(self, token: str) -> bool:
        """Is this anything but a navmcp token? Then Supabase verifies it (and names what is wrong).

        Only a routing decision: nothing is trusted before `verify`."""
        aud = unverified_audience(token)
        return aud is not None and aud != NAVMCP_AUDIENCE

    def verify(self, token: str) -> dict[str, Any]:
        try:
            alg = jwt.get_unverified_header(token).get("alg")
        except jwt.InvalidTokenError as e:
            raise AuthError(f"token is not valid: {e}") from None
        if alg == "HS256":
            if self.secret is None:
                raise AuthError("Supabase token signed with HS256 but SUPABASE_JWT_SECRET is not set")
            key: Any = self.secret
        elif alg in ASYMMETRIC:
            if self.jwks is None:
                raise AuthError(f"Supabase token signed with {alg} but SUPABASE_URL (for its JWKS) is not set")
            try:
                key = self.jwks.get_signing_key_from_jwt(token).key
            except jwt.PyJWKClientError as e:  # its message quotes the token's unverified `kid`: cut
                raise AuthError(f"token signing key not found in the project's JWKS: {echo(e, 120)}") from None
        else:  # `alg` is the token's unverified header: quoted, cut
            raise AuthError(f"token algorithm {echo(repr(alg), 40)} not accepted for Supabase tokens")
        try:
            return jwt.decode(
                token, key, algorithms=[alg], audience=self.audience, issuer=self.issuer,
                options={"require": ["exp", "sub", "aud"], "verify_iss": self.issuer is not None},
            )
        except jwt.ExpiredSignatureError:
            raise AuthError("Supabase token expired: sign in again to get a fresh access token") from None
        except jwt.InvalidAudienceError:
            raise AuthError(f"token is for another audience (expected {self.audience!r})") from None
        except jwt.InvalidIssuerError:
            raise AuthError(f"token was issued by another project (expected issuer {self.issuer!r})") from None
        except jwt.InvalidSignatureError:
            raise AuthError("token signature is invalid (signed with another project's secret or key?)") from None
        except jwt.MissingRequiredClaimError as e:
            raise AuthError(f"token lacks the {e.claim!r} claim") from None
        except jwt.InvalidTokenError as e:
            raise AuthError(f"token is not valid: {e}") from None

    def resolve(self, store: Store, token: str) -> Row:
        """The navmcp user for a verified Supabase token, created on first sight."""
        claims = self.verify(token)
        uid = str(claims["sub"])
        with store.read(user_id=uid) as tx:
            user = user_by_id(tx, uid)
        if user is not None:
            return user
        base, name = handle_from_claims(claims), display_name(claims)
        with store.write(user_id=uid) as tx:
            for n in range(1, 200):
                handle = base if n == 1 else f"{base[:28]}-{n}"
                try:
                    return create_user(tx, handle, name, user_id=uid, findable=False)  # until they choose
                except NavError:
                    # The handle is taken — or this user was created a moment ago by another request.
                    if (user := user_by_id(tx, uid)) is not None:
                        return user
        raise AuthError("could not find a free handle for this Supabase user")


def unverified_audience(token: str) -> Any:
    """The `aud` a token claims, unverified (None if it is not a JWT at all)."""
    try:
        return jwt.decode(token, options={"verify_signature": False}).get("aud", "")
    except jwt.InvalidTokenError:
        return None


def handle_from_claims(claims: dict[str, Any]) -> str:
    meta = claims.get("user_metadata") or {}
    email = claims.get("email") or ""
    for candidate in (meta.get("user_name"), meta.get("preferred_username"), email.split("@")[0],
                      meta.get("full_name"), meta.get("name")):
        if isinstance(candidate, str):
            handle = re.sub(r"[^a-z0-9-]+", "-", candidate.lower()).strip("-")[:32].rstrip("-")
            if HANDLE_RE.match(handle):
                return handle
    return "user-" + re.sub(r"[^a-z0-9]", "", str(claims["sub"]).lower())[:8]


def display_name(claims: dict[str, Any]) -> str | None:
    """The name the user gave their project, if any; never their e-mail address (a name is shown to
    every member of their studios): without one, navmcp shows their handle."""
    meta = claims.get("user_metadata") or {}
    for candidate in (meta.get("full_name"), meta.get("name")):
        if isinstance(candidate, str) and candidate.strip():
            try:
                return check_name(candidate.strip()[:100])
            except NavError:  # a control character, or an e-mail address typed as a name
                continue
    return None
