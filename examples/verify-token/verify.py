"""Verifying an entitlement token in Python (docs/entitlement-tokens.md), with the
`cryptography` package and the standard library only.

    claims = verify(token, "https://billing.example.com", "<tenant_id>:live")
    if claims["premium"]: ...

Run as a script: python3 verify.py API_URL AUDIENCE TOKEN [NOW_SECONDS]
prints the claims as JSON, or the reason on stderr and exits 1.
"""
import base64, json, sys, time, urllib.request
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

SKEW = 60  # seconds of difference allowed between your clock and the service's
_keys = {}  # kid -> public key; fetched again when a token names a kid not seen yet (rotation)


class Refused(Exception):
    pass


def _b64(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def _key(api_url, kid):
    if kid not in _keys:
        with urllib.request.urlopen(api_url.rstrip("/") + "/.well-known/jwks.json", timeout=5) as r:
            for k in json.load(r)["keys"]:
                if k.get("kty") == "OKP" and k.get("crv") == "Ed25519":
                    _keys[k["kid"]] = Ed25519PublicKey.from_public_bytes(_b64(k["x"]))
    if kid not in _keys:
        raise Refused("unknown_key")
    return _keys[kid]


def verify(token, api_url, audience, now=None):
    try:
        h, p, s = token.split(".")
        header, claims = json.loads(_b64(h)), json.loads(_b64(p))
    except ValueError:
        raise Refused("malformed")
    if header.get("alg") != "EdDSA" or header.get("typ") != "entitlements+jwt":
        raise Refused("malformed")
    try:
        _key(api_url, header.get("kid")).verify(_b64(s), f"{h}.{p}".encode())
    except InvalidSignature:
        raise Refused("bad_signature")
    now = time.time() if now is None else now
    if claims.get("iss") != api_url:
        raise Refused("wrong_issuer")
    if claims.get("aud") != audience:
        raise Refused("wrong_audience")
    if not isinstance(claims.get("exp"), int) or now >= claims["exp"] + SKEW:
        raise Refused("expired")
    return claims


if __name__ == "__main__":
    try:
        now = float(sys.argv[4]) if len(sys.argv) > 4 else None
        print(json.dumps(verify(sys.argv[3], sys.argv[1], sys.argv[2], now)))
    except Refused as e:
        print(e, file=sys.stderr)
        sys.exit(1)
