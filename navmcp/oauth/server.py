"""The OAuth grammar: Authlib's authorization server (RFC 6749 as OAuth 2.1 keeps it), with its
authorization-code grant, PKCE (RFC 7636, S256 only and always required), refresh-token grant,
revocation (RFC 7009), dynamic registration (RFC 7591) and issuer parameter (RFC 9207), wired to
our clients, grants and tokens. Resource indicators (RFC 8707), which Authlib leaves out, are
checked here: every token is bound to this server's /mcp, and a request naming another resource
is refused with `invalid_target`.

Authlib parses and validates the requests and writes the responses and errors; what is ours is
where things are stored, what a token is, and who the user is (the web app's sign-in).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from authlib.oauth2.rfc6749 import AuthorizationServer, ClientMixin, InvalidGrantError, OAuth2Error, grants as authlib_grants
from authlib.oauth2.rfc6749.errors import InvalidClientError, InvalidRequestError
from authlib.oauth2.rfc6749.requests import JsonPayload, JsonRequest, OAuth2Payload, OAuth2Request
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint
from authlib.oauth2.rfc7591.errors import InvalidClientMetadataError, InvalidRedirectURIError
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oauth2.rfc9207 import IssuerParameter

from navmcp.errors import AuthError
from navmcp.identity import Access, is_access_token, mint_access_token, verify_token
from navmcp.oauth import ACCESS_TOKEN_SECONDS, SCOPES, clients, grants, metadata
from navmcp.oauth.documents import FetchFailed

if TYPE_CHECKING:
    from navmcp.app import App

CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]
_PROBLEMS = {  # why a code or refresh token is refused (invalid_grant's description)
    "invalid": "unknown {what}",
    "used": "this authorization code was already used; the grant it was issued for is now revoked",
    "reused": "this refresh token was already used; every token of its grant is now revoked",
    "expired": "this {what} has expired",
    "revoked": "access was revoked (on Connected apps, or by a reused token)",
}


class InvalidTargetError(OAuth2Error):
    """RFC 8707 §2: the requested resource is not one this server issues tokens for."""

    error = "invalid_target"


# --- requests, as Authlib reads them ---------------------------------------------------------


class _Payload(OAuth2Payload):
    def __init__(self, lists: dict[str, list[str]]):
        self._datalist = lists
        self._data = {k: v[0] for k, v in lists.items() if v}

    @property
    def data(self) -> dict[str, str]:
        return self._data

    @property
    def datalist(self) -> dict[str, list[str]]:
        return self._datalist


class FormRequest(OAuth2Request):
    """An OAuth request: the authorization request's query, or a token/revocation form body."""

    def __init__(self, method: str, uri: str, headers: dict[str, str], params: dict[str, list[str]]):
        # Authlib reads `Authorization` by its canonical name; our headers are lowercase.
        named = {**headers, **({"Authorization": headers["authorization"]} if "authorization" in headers else {})}
        super().__init__(method, uri, headers=named)
        self.payload = _Payload(params)

    @property
    def args(self) -> dict[str, str]:
        return self.payload.data

    @property
    def form(self) -> dict[str, str]:
        return self.payload.data


class _Json(JsonPayload):
    def __init__(self, data: dict[str, Any]):
        self._data = data

    @property
    def data(self) -> dict[str, Any]:
        return self._data


class RegistrationRequest(JsonRequest):
    def __init__(self, uri: str, headers: dict[str, str], data: dict[str, Any]):
        super().__init__("POST", uri, headers)
        self.payload = _Json(data)


@dataclass
class Answer:
    """What Authlib answers: status, body (a dict for JSON, or ""), headers. `location` is the
    redirect, which the RFC 9207 extension amends."""

    status: int
    body: Any
    headers: list[tuple[str, str]]

    @property
    def location(self) -> str | None:
        return next((v for k, v in self.headers if k.lower() == "location"), None)

    @location.setter
    def location(self, value: str) -> None:
        self.headers = [(k, v) for k, v in self.headers if k.lower() != "location"] + [("Location", value)]


# --- what a grant hands Authlib ----------------------------------------------------------------


@dataclass
class Grantee:
    """The user a token is issued to, with the grant it is issued under."""

    grant: grants.Grant

    def get_user_id(self) -> str:
        return self.grant.user_id


@dataclass
class _Issued:
    """An authorization code or refresh token just spent, as Authlib's grants ask about it."""

    grant: grants.Grant
    redirect_uri: str = ""
    code_challenge: str | None = None
    code_challenge_method: str = "S256"

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.grant.scope

    def check_client(self, client: ClientMixin) -> bool:
        return client.get_client_id() == self.grant.client_id


def _grant_of(row: dict[str, Any], what: str) -> grants.Grant:
    if row["problem"] is not None:
        raise InvalidGrantError(description=_PROBLEMS[row["problem"]].format(what=what))
    return grants.Grant(row["grant_id"], row["user_id"], row["client_id"], row["client_name"], row["scope"],
                        row["resource"])


def _check_resource(request: OAuth2Request, resource: str, redirect_uri: str | None = None) -> None:
    """RFC 8707: each `resource` named must be this server's /mcp (case of scheme and host aside,
    and a trailing slash); none named means this one, the only resource here."""
    for named in request.payload.datalist.get("resource", []):
        if _canonical(named) != _canonical(resource):
            raise InvalidTargetError(description=f"this server issues tokens only for {resource}",
                                     redirect_uri=redirect_uri, state=request.payload.state)


def _canonical(uri: str) -> str:
    scheme, sep, rest = uri.partition("://")
    host, slash, path = rest.partition("/")
    return f"{scheme.lower()}{sep}{host.lower()}{slash}{path}".rstrip("/")


class S256Challenge(CodeChallenge):
    """PKCE as OAuth 2.1 wants it: required on every authorization request, S256 only."""

    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]
    DEFAULT_CODE_CHALLENGE_METHOD = "S256"

    def validate_code_challenge(self, grant: Any, redirect_uri: str) -> None:
        data = grant.request.payload.data
        if not data.get("code_challenge"):
            raise InvalidRequestError("PKCE is required: send code_challenge with code_challenge_method=S256")
        if data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("code_challenge_method must be S256")
        super().validate_code_challenge(grant, redirect_uri)


class CodeGrant(authlib_grants.AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = CLIENT_AUTH_METHODS
    server: OAuthServer

    def validate_authorization_request(self) -> str:
        redirect_uri = super().validate_authorization_request()
        _check_resource(self.request, self.server.resource, redirect_uri)
        return redirect_uri

    def generate_authorization_code(self) -> str:
        return grants.new_code()

    def save_authorization_code(self, code: str, request: OAuth2Request) -> None:
        client, user = request.client, request.user
        grants.approve(self.server.app.store, code, user["id"], client.get_client_id(), client.name,
                       request.scope, self.server.resource, request.payload.redirect_uri or "",
                       request.payload.data["code_challenge"])

    def query_authorization_code(self, code: str, client: ClientMixin) -> _Issued:
        row = grants.take_code(self.server.app.store, code)
        issued = _Issued(_grant_of(row, "authorization code"), row["redirect_uri"], row["code_challenge"])
        if not issued.check_client(client):
            raise InvalidGrantError(description="this authorization code was issued to another client")
        return issued

    def validate_token_request(self) -> None:
        super().validate_token_request()
        _check_resource(self.request, self.request.authorization_code.grant.resource)

    def delete_authorization_code(self, authorization_code: _Issued) -> None:
        pass  # spent when it was taken

    def authenticate_user(self, authorization_code: _Issued) -> Grantee:
        return Grantee(authorization_code.grant)


class RefreshGrant(authlib_grants.RefreshTokenGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = CLIENT_AUTH_METHODS
    INCLUDE_NEW_REFRESH_TOKEN = True  # rotation: every refresh spends the old token and issues a new one
    server: OAuthServer

    def validate_token_request(self) -> None:
        """Authlib's checks, in the order that spends the token last: the client and its grant
        type, then the token's client, scope and resource judged in the transaction that spends
        it (`grants.spend_refresh_token`), so a refused request leaves the token as it was."""
        client = self._validate_request_client()
        self.request.client = client
        presented = self.request.form.get("refresh_token")
        if not presented:
            raise InvalidRequestError("Missing 'refresh_token' in request.")

        def check(row: dict[str, Any]) -> None:
            issued = _Issued(_grant_of(row, "refresh token"))
            if not issued.check_client(client):
                raise InvalidGrantError(description="this refresh token was issued to another client")
            self._validate_token_scope(issued)
            _check_resource(self.request, issued.grant.resource)

        row = grants.spend_refresh_token(self.server.app.store, presented, check)
        self.request.refresh_token = _Issued(_grant_of(row, "refresh token"))

    def authenticate_user(self, refresh_token: _Issued) -> Grantee:
        return Grantee(refresh_token.grant)

    def revoke_old_credential(self, refresh_token: _Issued) -> None:
        pass  # spent when it was presented


@dataclass
class _Revocable:
    grant_id: str
    user_id: str
    client_id: str

    def check_client(self, client: ClientMixin) -> bool:
        return client.get_client_id() == self.client_id


class Revocation(RevocationEndpoint):
    """RFC 7009. Revoking either token revokes its grant: the refresh-token family and, since an
    access token names its grant, the access tokens too."""

    CLIENT_AUTH_METHODS = CLIENT_AUTH_METHODS
    server: OAuthServer

    def query_token(self, token_string: str, token_type_hint: str | None) -> _Revocable | None:
        app = self.server.app
        if is_access_token(token_string):
            try:
                user_id, access = verify_token(app.secret, token_string, self.server.resource)
            except AuthError:
                return None
            return _Revocable(access.grant_id, user_id, access.client_id)
        row = grants.refresh_token_owner(app.store, token_string)
        return _Revocable(row["grant_id"], row["user_id"], row["client_id"]) if row else None

    def revoke_token(self, token: _Revocable, request: OAuth2Request) -> None:
        grants.revoke_grant(self.server.app.store, token.user_id, token.grant_id)


class Registration(ClientRegistrationEndpoint):
    """RFC 7591, open to anyone (as MCP clients expect); a public client gets no secret."""

    server: OAuthServer

    def authenticate_token(self, request: Any) -> bool:
        return True

    def get_server_metadata(self) -> dict[str, Any]:
        return metadata.authorization_server(self.server.issuer)

    def extract_client_metadata(self, request: Any) -> dict[str, Any]:
        data = request.payload.data
        if not isinstance(data, dict) or not data:
            raise InvalidClientMetadataError("the body must be a JSON object of client metadata")
        data = {"token_endpoint_auth_method": "client_secret_basic", **data}  # RFC 7591 §2's default
        data.setdefault("grant_types", ["authorization_code"])
        data.setdefault("response_types", ["code"])
        try:
            return clients.validate_metadata(data, self.get_server_metadata())
        except clients.InvalidMetadata as e:
            problem = metadata.header_text(str(e), 300)
            raise (InvalidRedirectURIError if e.redirect_uri else InvalidClientMetadataError)(problem) from None

    def generate_client_info(self, request: Any) -> dict[str, Any]:
        info = super().generate_client_info(request)
        if request.payload.data.get("token_endpoint_auth_method") == "none":
            info.pop("client_secret")
            info.pop("client_secret_expires_at")
        return info

    def save_client(self, client_info: dict[str, Any], client_metadata: dict[str, Any], request: Any) -> None:
        clients.save_registered(self.server.app.store, client_info["client_id"], client_info.get("client_secret"),
                                client_metadata)


class _Issuer(IssuerParameter):
    def __init__(self, issuer: str):
        self.issuer = issuer

    def get_issuer(self) -> str:
        return self.issuer


class OAuthServer(AuthorizationServer):
    """One request's authorization server (the issuer is the request's origin, see `metadata`).
    `documents` are the metadata documents fetched for this request before it was handled
    (`navmcp.oauth.documents`): a client id that is a URL is looked up there, never fetched here."""

    def __init__(self, app: App, issuer: str, documents: Mapping[str, clients.Client | FetchFailed]):
        super().__init__(scopes_supported=list(SCOPES))
        self.app, self.issuer, self.documents = app, issuer, documents
        self.resource = metadata.resource(issuer)
        self.register_grant(CodeGrant, [S256Challenge(required=True)])
        self.register_grant(RefreshGrant)
        self.register_endpoint(Revocation)
        self.register_endpoint(Registration(self))
        self.register_extension(_Issuer(issuer))
        self.register_token_generator("default", self._token)

    def query_client(self, client_id: str) -> clients.Client | None:
        if clients.is_document_id(client_id):
            outcome = self.documents.get(client_id)
            if outcome is None:
                raise InvalidClientError(description="the client metadata document was not fetched for this "
                                                     "request: send the client id where OAuth says to")
            if isinstance(outcome, FetchFailed):
                raise InvalidClientError(description=outcome.description)
            return outcome
        return clients.load_registered(self.app.store, client_id)

    def save_token(self, token: dict[str, Any], request: OAuth2Request) -> None:
        pass  # the refresh token was stored as it was made (`_token`); access tokens are not stored

    def create_oauth2_request(self, request: Any) -> Any:
        return request

    def create_json_request(self, request: Any) -> Any:
        return request

    def handle_response(self, status: int, body: Any, headers: list[tuple[str, str]]) -> Answer:
        return Answer(status, body, list(headers))

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        pass

    def _token(self, grant_type: str, client: clients.Client, user: Grantee, scope: str | None,
               expires_in: int | None = None, include_refresh_token: bool = True) -> dict[str, Any]:
        grant = user.grant
        scopes = frozenset((scope or grant.scope).split()) & frozenset(grant.scope.split())
        access = Access(grant.id, grant.client_id, grant.client_name, scopes, grant.resource)
        token = {"token_type": "Bearer", "expires_in": ACCESS_TOKEN_SECONDS, "scope": " ".join(sorted(scopes)),
                 "access_token": mint_access_token(self.app.secret, issuer=self.issuer, user_id=grant.user_id,
                                                   access=access, seconds=ACCESS_TOKEN_SECONDS)}
        if include_refresh_token:
            token["refresh_token"] = grants.issue_refresh_token(self.app.store, grant)
        return token

