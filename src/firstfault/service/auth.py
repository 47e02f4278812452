"""Optional bearer-token authentication, one token per Blueprint, with scopes.

Every configured token is compared, in constant time, so neither the
answer's timing nor its order says which token came close. Tokens never
reach the logs: requests are logged with the token's name.
"""

from __future__ import annotations

import hmac

from firstfault.service.errors import Problem
from firstfault.service.settings import Scope, Token

MAX_AUTHORIZATION = 8 << 10  # bytes of the Authorization header; longer is a 431, never compared
# (The whole request head is bounded before the app, by service.protocol: 64 KiB.)


class TokenCheck:
    def __init__(self, tokens: list[Token]) -> None:
        self._tokens = [(t.name, t.secret.get_secret_value().encode(), frozenset(t.scopes)) for t in tokens]

    @property
    def enabled(self) -> bool:
        return bool(self._tokens)

    def check(self, authorization: str | None, scope: Scope) -> str | None:
        """The name of the token presented; raises 401 (no or unknown token) or 403 (scope)."""
        if not self._tokens:
            return None
        challenge = {"WWW-Authenticate": 'Bearer realm="firstfault"'}
        if authorization is not None and len(authorization) > MAX_AUTHORIZATION:
            raise Problem(431, "header_too_large",
                          f"the Authorization header is over the {MAX_AUTHORIZATION} byte limit", headers=challenge)
        if not authorization:
            raise Problem(401, "unauthorized", "a bearer token is required (Authorization: Bearer TOKEN)",
                          headers=challenge)
        scheme, _, presented = authorization.partition(" ")
        if scheme.lower() != "bearer" or not presented.strip():
            raise Problem(401, "unauthorized", "the Authorization header must be 'Bearer TOKEN'", headers=challenge)
        given = presented.strip().encode("utf-8", errors="replace")
        match: tuple[str, frozenset[str]] | None = None
        for name, secret, scopes in self._tokens:
            if hmac.compare_digest(given, secret) and match is None:
                match = (name, scopes)
        if match is None:
            raise Problem(401, "unauthorized", "the bearer token is not valid",
                          headers={"WWW-Authenticate": 'Bearer realm="firstfault", error="invalid_token"'})
        if scope not in match[1]:
            raise Problem(403, "forbidden", f"the token {match[0]!r} lacks the {scope!r} scope")
        return match[0]
