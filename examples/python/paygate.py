"""A reference Paygate merchant client in Python, written from the specification alone.

Everything the protocol needs is here, in the order the specification describes it:

* Content-Digest (RFC 9530): ``sha-256=:<base64 SHA-256 of the wire body>:``.
* The sealed-box envelope: the business JSON sealed to the platform X25519 body key
  (libsodium ``crypto_box_seal``), sent as ``{"version", "alg", "keyId", "ciphertext"}``.
* The RFC 9421 signature base, built by hand, signed with the merchant's Ed25519 key.
* Signed writes (POST) and reads (GET), and webhook verification with a tiny receiver.

Dependencies: PyNaCl (sealed box) and cryptography (Ed25519, PEM keys); on Debian
``apt-get install -y python3-nacl python3-cryptography``. Standard library otherwise.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Mapping

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from nacl.public import PublicKey, SealedBox

ENVELOPE_ALG = "sealedbox-v1-x25519-xsalsa20poly1305"
SIGNATURE_LIFETIME = 300  # seconds between created and expires, at most

WRITE_COMPONENTS = (
    "@method",
    "@path",
    "content-type",
    "content-encryption",
    "content-digest",
    "idempotency-key",
    "merchant-access-key",
)
READ_COMPONENTS = ("@method", "@path", "@query", "merchant-access-key")
WEBHOOK_COMPONENTS = ("@method", "@path", "@query", "content-type", "content-digest", "webhook-event-id")


# --- keys ------------------------------------------------------------------------------------


def load_private_key(value: str | bytes) -> Ed25519PrivateKey:
    """The merchant's Ed25519 key from a PEM (PKCS#8), or base64 of a 32-byte seed or 64-byte key."""
    text = value.decode() if isinstance(value, bytes) else value
    if "-----BEGIN" in text:
        key = serialization.load_pem_private_key(text.encode(), password=None)
        if not isinstance(key, Ed25519PrivateKey):
            raise ValueError("the PEM key is not an Ed25519 key")
        return key
    raw = base64.b64decode(text.strip(), validate=True)
    if len(raw) not in (32, 64):
        raise ValueError("an Ed25519 private key is a 32-byte seed or a 64-byte seed and public key")
    key = Ed25519PrivateKey.from_private_bytes(raw[:32])
    if len(raw) == 64 and public_key_bytes(key.public_key()) != raw[32:]:
        raise ValueError("the public half of the 64-byte key does not match its seed")
    return key


def public_key_bytes(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# --- wire format -----------------------------------------------------------------------------


def content_digest(body: bytes) -> str:
    """The Content-Digest header value over the exact body bytes."""
    return f"sha-256=:{b64(hashlib.sha256(body).digest())}:"


def seal(plaintext: bytes, body_key_id: str, body_public_key: bytes) -> bytes:
    """The wire body of a POST: the plaintext sealed to the platform body key, in the envelope."""
    ciphertext = SealedBox(PublicKey(body_public_key)).encrypt(plaintext)
    envelope = {"version": 1, "alg": ENVELOPE_ALG, "keyId": body_key_id, "ciphertext": b64(ciphertext)}
    return json.dumps(envelope, separators=(",", ":")).encode()


def signature_params(components: tuple[str, ...], params: list[tuple[str, int | str]]) -> str:
    """The Signature-Input value without its label: ("a" "b");created=1;nonce="…"."""
    inner = " ".join(f'"{name}"' for name in components)
    rendered = "".join(f";{k}={v}" if isinstance(v, int) else f';{k}="{v}"' for k, v in params)
    return f"({inner}){rendered}"


def signature_base(values: Mapping[str, str], components: tuple[str, ...], params_value: str) -> str:
    """One line per covered component, then @signature-params; joined by LF, no trailing LF."""
    lines = [f'"{name}": {values[name]}' for name in components]
    lines.append(f'"@signature-params": {params_value}')
    return "\n".join(lines)


def query_component(raw_query: str | None) -> str:
    """@query: a question mark and the raw query exactly as sent (a lone "?" when there is none)."""
    return "?" + (raw_query or "")


@dataclass
class SignedRequest:
    method: str
    target: str  # path and raw query, as sent
    headers: dict[str, str]
    body: bytes | None
    signature_base: str


def sign_request(
    key: Ed25519PrivateKey,
    access_key: str,
    method: str,
    path: str,
    raw_query: str | None = None,
    body: bytes | None = None,
    *,
    created: int | None = None,
    nonce: str | None = None,
    idempotency_key: str | None = None,
) -> SignedRequest:
    """Signs a write (POST with its wire body) or a read (GET) the way the platform verifies it."""
    created = int(time.time()) if created is None else created
    params: list[tuple[str, int | str]] = [
        ("created", created),
        ("expires", created + SIGNATURE_LIFETIME),
        ("nonce", nonce or str(uuid.uuid4())),
        ("alg", "ed25519"),
    ]
    headers = {"merchant-access-key": access_key}
    values = {"@method": method.upper(), "@path": path}
    if method.upper() == "POST":
        if body is None or raw_query:
            raise ValueError("a write has a body and no query string")
        components = WRITE_COMPONENTS
        headers.update(
            {
                "content-type": "application/json",
                "content-encryption": ENVELOPE_ALG,
                "content-digest": content_digest(body),
                "idempotency-key": idempotency_key or str(uuid.uuid4()),
            }
        )
    elif method.upper() == "GET":
        if body is not None:
            raise ValueError("a read has no body")
        components = READ_COMPONENTS
        values["@query"] = query_component(raw_query)
    else:
        raise ValueError("only POST and GET are used")
    values.update(headers)
    params_value = signature_params(components, params)
    base = signature_base(values, components, params_value)
    signature = key.sign(base.encode())
    headers["signature-input"] = f"merchant={params_value}"
    headers["signature"] = f"merchant=:{b64(signature)}:"
    target = path + (f"?{raw_query}" if raw_query else "")
    return SignedRequest(method.upper(), target, headers, body, base)


# --- the client ------------------------------------------------------------------------------


class PaygateError(Exception):
    """A reply other than {"msg": "SUCCESS"}: the HTTP status, msg and the whole body."""

    def __init__(self, status: int, body: dict[str, Any]):
        super().__init__(f"HTTP {status}: {body.get('msg')} {json.dumps(body.get('errors', ''))}".strip())
        self.status = status
        self.msg = body.get("msg")
        self.body = body


@dataclass
class Client:
    base_url: str
    access_key: str
    private_key: Ed25519PrivateKey
    body_key_id: str
    body_public_key: bytes
    timeout: float = 10.0

    @classmethod
    def from_onboarding(cls, base_url: str, private_key: str | bytes, onboarding: Mapping[str, Any]) -> "Client":
        """From the merchant's key and the JSON `paygate merchant create --json` printed."""
        return cls(
            base_url=base_url.rstrip("/"),
            access_key=onboarding["accessKey"],
            private_key=load_private_key(private_key),
            body_key_id=onboarding["bodyKey"]["keyId"],
            body_public_key=base64.b64decode(onboarding["bodyKey"]["publicKey"]),
        )

    def request(self, method: str, path: str, payload: Any = None, query: Mapping[str, Any] | None = None):
        """Sends one signed request; returns (HTTP status, parsed JSON body)."""
        raw_query = urllib.parse.urlencode({k: v for k, v in (query or {}).items() if v is not None})
        body = None
        if method.upper() == "POST":
            plaintext = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
            body = seal(plaintext, self.body_key_id, self.body_public_key)
        signed = sign_request(self.private_key, self.access_key, method, path, raw_query or None, body)
        request = urllib.request.Request(
            self.base_url + signed.target, data=signed.body, headers=signed.headers, method=signed.method
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")

    def call(self, method: str, path: str, payload: Any = None, query: Mapping[str, Any] | None = None) -> Any:
        """Like `request`, but returns `data` and raises PaygateError on any other msg."""
        status, body = self.request(method, path, payload, query)
        if body.get("msg") != "SUCCESS":
            raise PaygateError(status, body)
        return body.get("data")

    def create_payment(self, order: Mapping[str, Any]) -> dict[str, Any]:
        return self.call("POST", "/api/v1/payments", order)

    def get_payment(self, order_no: str | None = None, merchant_order_no: str | None = None) -> dict[str, Any]:
        return self.call("GET", "/api/v1/payments", query={"orderNo": order_no, "merchantOrderNo": merchant_order_no})

    def list_payments(self, **filters: Any) -> dict[str, Any]:
        """One page: {"items": [...], "nextCursor": ...}; filters: status, from, to, pageSize, cursor."""
        return self.call("GET", "/api/v1/payments/list", query=filters)

    def balances(self, currency: str | None = None) -> list[dict[str, Any]]:
        return self.call("GET", "/api/v1/balances", query={"currency": currency})

    def simulate_payment(self, order_no: str, status: str, **fields: Any) -> dict[str, Any]:
        """Sandbox only: drives a payment as the channel would (SUCCEEDED, FAILED, ...)."""
        return self.call("POST", "/api/v1/sandbox/payments/simulate", {"orderNo": order_no, "status": status, **fields})


# --- webhooks --------------------------------------------------------------------------------


class WebhookError(Exception):
    """A webhook that failed verification; the message says which check."""


_SIGNATURE_INPUT = re.compile(r'^platform=\(((?:"[a-z@-]+"(?: "[a-z@-]+")*))\)((?:;[a-z]+=(?:\d+|"[^"\\]*"))+)$')
_PARAM = re.compile(r';([a-z]+)=(\d+|"[^"\\]*")')
_SIGNATURE = re.compile(r"^platform=:([A-Za-z0-9+/]+={0,2}):$")
_UUID_V4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


@dataclass
class WebhookVerifier:
    """Verifies webhooks in the specification's order, with the platform keys by keyid."""

    keys: dict[str, bytes]  # keyid -> raw 32-byte Ed25519 public key
    clock: Callable[[], float] = time.time
    _nonces: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def from_onboarding(cls, onboarding: Mapping[str, Any], **kwargs: Any) -> "WebhookVerifier":
        keys = {k["keyid"]: base64.b64decode(k["publicKey"]) for k in onboarding["webhookKeys"]}
        return cls(keys, **kwargs)

    def verify(
        self, method: str, path: str, raw_query: str | None, headers: Mapping[str, str], body: bytes
    ) -> dict[str, Any]:
        """Returns the event when every check passes; raises WebhookError otherwise.

        `headers` is keyed by lower-case name; `path` and `raw_query` are the request target as
        received, split at the first "?"; `body` is the raw bytes, never re-serialized.
        """
        required = ("content-type", "content-digest", "webhook-event-id", "signature-input", "signature")
        missing = [name for name in required if not headers.get(name)]
        if method.upper() != "POST" or missing:
            raise WebhookError(f"not a webhook request (method {method}, missing {missing})")
        # 1. Content-Digest over the raw body.
        if headers["content-digest"] != content_digest(body):
            raise WebhookError("Content-Digest does not match the body")
        # 2. Webhook-Event-Id equals the body's eventId.
        try:
            event = json.loads(body)
        except ValueError:
            raise WebhookError("the body is not JSON") from None
        if not isinstance(event, dict) or event.get("eventId") != headers["webhook-event-id"]:
            raise WebhookError("Webhook-Event-Id does not equal the body's eventId")
        # 3. Signature-Input: covered components, time window, nonce.
        match = _SIGNATURE_INPUT.match(headers["signature-input"])
        if not match:
            raise WebhookError("Signature-Input is malformed")
        covered = tuple(name.strip('"') for name in match.group(1).split(" "))
        if covered != WEBHOOK_COMPONENTS:
            raise WebhookError("Signature-Input covers other components")
        params: dict[str, str] = {}
        for name, value in _PARAM.findall(match.group(2)):
            if name in params:
                raise WebhookError(f"Signature-Input repeats {name}")
            params[name] = value
        if set(params) != {"created", "expires", "nonce", "keyid", "alg"} or params["alg"] != '"ed25519"':
            raise WebhookError("Signature-Input parameters are not created, expires, nonce, keyid, alg=ed25519")
        if not (params["created"].isdigit() and params["expires"].isdigit()):
            raise WebhookError("created and expires are not integers")
        created, expires, now = int(params["created"]), int(params["expires"]), self.clock()
        if expires < created or expires - created > SIGNATURE_LIFETIME:
            raise WebhookError("the signature lifetime exceeds 300 seconds")
        if now > expires or now < created - SIGNATURE_LIFETIME:
            raise WebhookError("the signature is outside its time window")
        nonce = params["nonce"].strip('"')
        if not _UUID_V4.match(nonce):
            raise WebhookError("the nonce is not a UUID v4")
        # 4. The key by keyid.
        public_key = self.keys.get(params["keyid"].strip('"'))
        if public_key is None:
            raise WebhookError("unknown keyid")
        # 5. The signature over the reconstructed base.
        signature = _SIGNATURE.match(headers["signature"])
        if not signature:
            raise WebhookError("Signature is malformed")
        values = {
            "@method": "POST",
            "@path": path,
            "@query": query_component(raw_query),
            "content-type": headers["content-type"],
            "content-digest": headers["content-digest"],
            "webhook-event-id": headers["webhook-event-id"],
        }
        params_value = headers["signature-input"][len("platform=") :]
        base = signature_base(values, WEBHOOK_COMPONENTS, params_value)
        try:
            Ed25519PublicKey.from_public_bytes(public_key).verify(base64.b64decode(signature.group(1)), base.encode())
        except (InvalidSignature, ValueError):
            raise WebhookError("the signature does not verify") from None
        # A nonce is accepted once while its signature is valid (each delivery is signed afresh).
        with self._lock:
            self._nonces = {n: e for n, e in self._nonces.items() if e >= now}
            if nonce in self._nonces:
                raise WebhookError("the nonce was already used")
            self._nonces[nonce] = expires
        return event


def webhook_receiver(
    verifier: WebhookVerifier,
    on_event: Callable[[dict[str, Any]], None],
    host: str = "127.0.0.1",
    port: int = 0,
    on_reject: Callable[[WebhookError], None] | None = None,
) -> ThreadingHTTPServer:
    """An HTTP server that verifies every POST as a webhook: 200 when verified (each eventId is
    handed to `on_event` once, repeats are acknowledged), 401 otherwise. Call serve_forever()."""
    seen: set[str] = set()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            path, _, raw_query = self.path.partition("?")
            single = {name.lower(): self.headers.get_all(name) or [] for name in self.headers.keys()}
            if any(len(values) != 1 for values in single.values()):
                return self._reply(401, {"msg": "UNAUTHORIZED"})
            headers = {name: values[0] for name, values in single.items()}
            try:
                event = verifier.verify("POST", path, raw_query if "?" in self.path else None, headers, body)
            except WebhookError as error:
                if on_reject:
                    on_reject(error)
                return self._reply(401, {"msg": "UNAUTHORIZED"})
            with lock:
                first = event["eventId"] not in seen
                seen.add(event["eventId"])
            if first:
                on_event(event)
            self._reply(200, {"msg": "SUCCESS"})

        def _reply(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

    return ThreadingHTTPServer((host, port), Handler)
