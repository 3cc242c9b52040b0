"""An API client, a resource server and a platform written with Authlib (Debian's
python3-authlib), as a Python integrator would write them, against a running stack
(tests/e2e/outside-clients.test.ts).

Reads one JSON object on stdin: issuer, audience, api (the API's base URL), client_id and
client_secret (a client with every route scope), reader_id and reader_secret (a client whose
token it revokes), introspector_id and introspector_secret (a client holding tokens:introspect),
user_token, refresh_token, and `platform`: client_id, client_secret, redirect_uri and scope of a
platform (docs/platforms.md), and username, password and customer_id of the customer's
administrator who approves it. Secrets and tokens come on stdin, never in argv. Prints one JSON
object on stdout: what Authlib returned, no secret, no code and no token in it.
"""

import json
import sys
import time
from html.parser import HTMLParser
from urllib.parse import parse_qs, parse_qsl, urljoin, urlsplit

import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session, OAuthError
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


def validated(token, **values):
    """The header and claims Authlib validated the access token to, or the error it refused it with.

    `values`: further claims the token must carry, with these values.
    """
    further = {name: {"essential": True, "value": value} for name, value in values.items()}
    options = {**claims_options, **further}
    try:
        claims = jwt.decode(token, jwks, claims_options=options)
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


def sent_to_token_endpoint(session):
    """What `session` sent the token endpoint last: its Authorization scheme and its body's names.

    The dict it returns is filled in by each request the session makes there.
    """
    sent = {}

    def keep(response, *args, **kwargs):
        request = response.request
        if request.url == metadata["token_endpoint"]:
            authorization = request.headers.get("Authorization")
            sent["authorization"] = authorization.split(" ")[0] if authorization else None
            sent["body"] = sorted(parse_qs(request.body or ""))

    session.hooks["response"].append(keep)
    return sent


def granted(auth_method):
    """A client credentials grant by an OAuth2Session authenticating with `auth_method`."""
    session = OAuth2Session(
        given["client_id"], given["client_secret"], token_endpoint_auth_method=auth_method
    )
    sent = sent_to_token_endpoint(session)
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


class PageForm(HTMLParser):
    """The authorization page's first form as a browser reads it: where it posts, and its hidden
    fields (a browser posts one form; the sign-in page's second is the passkey's, its script's)."""

    def __init__(self, html):
        super().__init__()
        self.action = None
        self.fields = {}
        self.forms = 0
        self.inside = False
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.forms += 1
            self.inside = self.forms == 1
            if self.inside:
                self.action = attrs.get("action")
        elif tag == "input" and attrs.get("type") == "hidden" and self.inside:
            self.fields[attrs["name"]] = attrs.get("value") or ""

    def handle_endtag(self, tag):
        if tag == "form":
            self.inside = False


def submitted(browser, page, fields):
    """The page's form posted as a browser posts it: its hidden fields, `fields`, and the page's
    Origin (the page refuses a post without it, a CSRF guard). The 303 is not followed: its
    Location is the platform's to read."""
    form = PageForm(page.text)
    scheme, netloc = urlsplit(page.url)[:2]
    return browser.post(
        urljoin(page.url, form.action or ""),
        data={**form.fields, **fields},
        headers={"Origin": f"{scheme}://{netloc}"},
        allow_redirects=False,
        timeout=10,
    )


def described(token):
    """A token response without its tokens: the names of its members and those that are no secret."""
    return {
        # expires_at is Authlib's own, computed from expires_in: not a member of the answer.
        "fields": sorted(name for name in token if name != "expires_at"),
        **{name: token.get(name) for name in ("token_type", "expires_in", "scope", "customer_id")},
    }


def refused_or_described(call):
    """The token response `call` returns, described; or the OAuth error Authlib raised for it."""
    try:
        return described(call())
    except OAuthError as error:
        return {"refused": error.error, "description": error.description}


def connected():
    """A platform's authorization code flow with PKCE S256 (docs/platforms.md), by an OAuth2Session,
    the customer's administrator's browser played by a requests.Session: sign-in, approval, the
    code exchanged, the refresh token rotated and the spent one used again within the grace window."""
    given_platform = given["platform"]
    # The scope goes in the authorization request; a refresh keeps the approved ones.
    platform = OAuth2Session(
        given_platform["client_id"],
        given_platform["client_secret"],
        redirect_uri=given_platform["redirect_uri"],
        code_challenge_method="S256",
    )
    sent = sent_to_token_endpoint(platform)
    # RFC 7636 section 4.1: 43 to 128 characters of the unreserved set; Authlib's are letters and digits.
    code_verifier = generate_token(64)
    url, state = platform.create_authorization_url(
        metadata["authorization_endpoint"], code_verifier=code_verifier, scope=given_platform["scope"]
    )
    requested = dict(parse_qsl(urlsplit(url).query))

    browser = requests.Session()

    def loopback(answer):
        # The page binds the request to the browser with a Secure cookie, a new one at the sign-in.
        # Browsers treat a loopback origin as secure and send it there over plain http; requests
        # sends a Secure cookie over https only (and its per-request jar takes no cookie policy),
        # so on loopback each is unmarked as it comes.
        for cookie in browser.cookies:
            cookie.secure = False
        return answer

    sign_in = loopback(browser.get(url, allow_redirects=False, timeout=10))
    consent = loopback(
        submitted(
            browser,
            sign_in,
            {"username": given_platform["username"], "password": given_platform["password"]},
        )
    )
    decided = submitted(browser, consent, {"action": "approve"})
    location = decided.headers.get("Location", "")
    answered = dict(parse_qsl(urlsplit(location).query))
    authorization = {
        "request": {
            "names": sorted(requested),
            "code_challenge_method": requested.get("code_challenge_method"),
            "scope": requested.get("scope"),
        },
        "pages": {
            "sign_in": sign_in.status_code,
            "cookies": sorted(browser.cookies.keys()),
            "consent": consent.status_code,
            "consent_names_customer": given_platform["customer_id"] in consent.text,
            "decided": decided.status_code,
        },
        "response": {
            "redirected_to": location.split("?")[0],
            "names": sorted(answered),
            "state_matches": answered.get("state") == state,
            # RFC 9207: Authlib does not check `iss` itself, so the platform does, before it
            # sends the code anywhere (a mix-up attack's answer comes from another issuer).
            "iss_is_issuer": answered.get("iss") == metadata["issuer"],
        },
    }
    if not authorization["response"]["iss_is_issuer"]:
        return {"authorization": authorization, "refused": "the answer's iss is not the issuer"}

    # Authlib takes the code from the answer, after checking its state against `state`.
    token = platform.fetch_token(
        metadata["token_endpoint"],
        authorization_response=location,
        state=state,
        code_verifier=code_verifier,
    )
    exchange_sent = dict(sent)
    access_token, first_refresh = token["access_token"], token["refresh_token"]
    # The session sends its token in the Authorization header; an unknown parcel number is a 404.
    tracked = platform.get(given["api"] + "/tracking/12345678901234", timeout=10)

    refreshed = platform.refresh_token(metadata["token_endpoint"], refresh_token=first_refresh)
    refresh_sent = dict(sent)
    current_refresh = refreshed["refresh_token"]
    tracked_after = platform.get(given["api"] + "/tracking/12345678901234", timeout=10)
    # Later, the spent refresh token again, as after a lost answer: within the grace window
    # (30 s locally) it is answered with the current one, and the connection goes on.
    reused = refused_or_described(
        lambda: platform.refresh_token(metadata["token_endpoint"], refresh_token=first_refresh)
    )
    current = refused_or_described(
        lambda: platform.refresh_token(metadata["token_endpoint"], refresh_token=current_refresh)
    )
    return {
        "authorization": authorization,
        "exchange": {
            "sent": exchange_sent,
            "token": described(token),
            "validated": validated(access_token, customer_id=given_platform["customer_id"]),
            "tracking_status": tracked.status_code,
        },
        "refresh": {
            "sent": refresh_sent,
            "token": described(refreshed),
            "rotated": current_refresh != first_refresh,
            "new_access_token": refreshed["access_token"] != access_token,
            "tracking_status": tracked_after.status_code,
        },
        "spent_refresh_again": reused,
        "current_refresh_after": current,
    }


print(
    json.dumps(
        {
            "discovery": {
                "url": metadata_url,
                "issuer": metadata["issuer"],
                "authorization_endpoint": metadata.get("authorization_endpoint"),
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
            "platform": connected(),
        }
    )
)
