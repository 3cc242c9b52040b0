"""An API client and a resource server written with Authlib (Debian's python3-authlib), as a
Python integrator would write them, against a running stack (tests/e2e/outside-clients.test.ts).

Reads one JSON object on stdin: issuer, audience, api (the API's base URL), client_id and
client_secret (a client with every route scope), reader_id and reader_secret (a client whose
token it revokes), introspector_id and introspector_secret (a client holding tokens:introspect),
user_token, refresh_token. Secrets and tokens come on stdin, never in argv. Prints one JSON
object on stdout: what Authlib returned, no secret and no token in it.
"""

import json
import sys
import time
from urllib.parse import parse_qs

import requests
from authlib.integrations.requests_client import OAuth2Session
from authlib.jose import JsonWebToken
from authlib.jose.errors import JoseError
from authlib.oauth2.rfc8414 import AuthorizationServerMetadata, get_well_known_url

given = json.load(sys.stdin)
issuer = given["issuer"]
audience = given["audience"]

# RFC 8414 section 3: the metadata's URL from the issuer alone.
metadata_url = get_well_known_url(issuer, external=True)
answer = requests.get(metadata_url, timeout=10)
answer.raise_for_status()
metadata = AuthorizationServerMetadata(answer.json())
# Each member's check on its own, so that one refused member does not hide the others.
problems = {}
for key in metadata.REGISTRY_KEYS:
    try:
        getattr(metadata, "validate_" + key)()
    except ValueError as error:
        problems[key] = str(error)
if metadata["issuer"] != issuer:
    problems["issuer"] = "not the issuer it was discovered by"

jwks = requests.get(metadata["jwks_uri"], timeout=10).json()
jwt = JsonWebToken(["EdDSA"])
# RFC 9068 section 2.2's claims, each required; iss and aud with the values they must have.
claims_options = {
    "iss": {"essential": True, "value": issuer},
    "aud": {"essential": True, "value": audience},
    "exp": {"essential": True},
    "sub": {"essential": True},
    "client_id": {"essential": True},
    "iat": {"essential": True},
    "jti": {"essential": True},
    "scope": {"essential": True},
}


def validated(token):
    """The header and claims Authlib validated the access token to, or the error it refused it with."""
    try:
        claims = jwt.decode(token, jwks, claims_options=claims_options)
        claims.validate(leeway=5)
    except JoseError as error:
        return {"refused": type(error).__name__, "error": error.error, "description": error.description}
    return {"header": dict(claims.header), "claims": dict(claims)}


introspector = OAuth2Session(given["introspector_id"], given["introspector_secret"])


def introspected(token):
    """RFC 7662: the introspection endpoint's answer, as the client holding tokens:introspect gets it."""
    answer = introspector.introspect_token(metadata["introspection_endpoint"], token=token)
    answer.raise_for_status()
    return answer.json()


def granted(auth_method):
    """A client credentials grant by an OAuth2Session authenticating with `auth_method`."""
    session = OAuth2Session(
        given["client_id"], given["client_secret"], token_endpoint_auth_method=auth_method
    )
    sent = {}

    def keep(response, *args, **kwargs):
        request = response.request
        if request.url == metadata["token_endpoint"]:
            authorization = request.headers.get("Authorization")
            sent["authorization"] = authorization.split(" ")[0] if authorization else None
            sent["body"] = sorted(parse_qs(request.body or ""))

    session.hooks["response"].append(keep)
    token = session.fetch_token(metadata["token_endpoint"], grant_type="client_credentials")
    # The session sends its token in the Authorization header; an unknown parcel number is a 404.
    tracked = session.get(given["api"] + "/tracking/12345678901234", timeout=10)
    return {
        "sent": sent,
        "token": {name: token.get(name) for name in ("token_type", "scope", "expires_in")},
        "validated": validated(token["access_token"]),
        "tracking_status": tracked.status_code,
        "introspected": introspected(token["access_token"]),
    }


def revoked():
    """RFC 7009: a client revokes its own token; what introspection and the route then answer."""
    reader = OAuth2Session(
        given["reader_id"],
        given["reader_secret"],
        token_endpoint_auth_method="client_secret_post",
        revocation_endpoint_auth_method="client_secret_post",
    )
    token = reader.fetch_token(metadata["token_endpoint"], grant_type="client_credentials")["access_token"]
    before = introspected(token)
    answer = reader.revoke_token(metadata["revocation_endpoint"], token=token)
    # The authorizer and introspection see a revocation within the stage's bound (1 s locally).
    deadline = time.monotonic() + 5
    after = introspected(token)
    while after["active"] and time.monotonic() < deadline:
        time.sleep(0.25)
        after = introspected(token)
    tracked = reader.get(given["api"] + "/tracking/12345678901234", timeout=10)
    while tracked.status_code != 401 and time.monotonic() < deadline:
        time.sleep(0.25)
        tracked = reader.get(given["api"] + "/tracking/12345678901234", timeout=10)
    return {
        "status": answer.status_code,
        "introspected_before": before,
        "introspected_after": after,
        "tracking_status_after": tracked.status_code,
    }


print(
    json.dumps(
        {
            "discovery": {
                "url": metadata_url,
                "issuer": metadata["issuer"],
                "token_endpoint": metadata["token_endpoint"],
                "jwks_uri": metadata["jwks_uri"],
                "revocation_endpoint": metadata.get("revocation_endpoint"),
                "introspection_endpoint": metadata.get("introspection_endpoint"),
                "problems": problems,
            },
            "grants": {method: granted(method) for method in ("client_secret_basic", "client_secret_post")},
            "user": validated(given["user_token"]),
            "refresh": validated(given["refresh_token"]),
            "introspected": {
                "user": introspected(given["user_token"]),
                "refresh": introspected(given["refresh_token"]),
            },
            "revoked": revoked(),
        }
    )
)
