"""Tests of the Python reference client: the shared protocol vectors, then (when PAYGATE_URL is
set) a live run against a platform: create, query, list, balances, and a webhook delivered to
the Python receiver that verifies, while tampered and replayed copies are refused.

    /usr/bin/python3 examples/python/test_paygate.py            # vectors only
    PAYGATE_URL=… PAYGATE_PRIVATE_KEY=key.pem PAYGATE_ONBOARDING=merchant.json /usr/bin/python3 …

PAYGATE_VECTORS names the vectors file (default: ../shared/vectors beside the checkout, else the
copy under packages/protocol/test/fixtures). PAYGATE_REQUIRE_LIVE=1 fails instead of skipping
the live tests when PAYGATE_URL is missing.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import threading
import unittest
import urllib.error
import urllib.request
import uuid
from pathlib import Path

from nacl.public import PrivateKey, SealedBox

import paygate

HERE = Path(__file__).resolve().parent


def load_vectors() -> dict:
    candidates = [
        os.environ.get("PAYGATE_VECTORS"),
        HERE / "../../../shared/vectors/protocol-vectors.json",
        HERE / "../../packages/protocol/test/fixtures/protocol-vectors.json",
    ]
    for candidate in candidates:
        if candidate and Path(candidate).exists():
            return json.loads(Path(candidate).read_text())
    raise FileNotFoundError("protocol-vectors.json not found")


V = load_vectors()


def param(signature_input: str, name: str) -> str:
    for part in signature_input.split(";")[1:]:
        key, _, value = part.partition("=")
        if key == name:
            return value.strip('"')
    raise KeyError(name)


class VectorTest(unittest.TestCase):
    def merchant_keys(self):
        m = V["keys"]["merchant"]
        return [m["private_key_pem"], m["seed_base64"], m["full_key_base64"]]

    def test_keys_give_the_vector_public_key(self):
        for form in self.merchant_keys():
            key = paygate.load_private_key(form)
            self.assertEqual(
                paygate.b64(paygate.public_key_bytes(key.public_key())), V["keys"]["merchant"]["public_key_base64"]
            )

    def test_write_request_base_and_signature(self):
        w = V["write_request"]
        body = w["body_utf8"].encode()
        self.assertEqual(paygate.content_digest(body), w["headers"]["content-digest"])
        for form in self.merchant_keys():
            signed = paygate.sign_request(
                paygate.load_private_key(form),
                V["access_key"],
                w["method"],
                w["path"],
                None,
                body,
                created=int(param(w["signature_input"], "created")),
                nonce=param(w["signature_input"], "nonce"),
                idempotency_key=w["headers"]["idempotency-key"],
            )
            self.assertEqual(signed.signature_base, w["signature_base"])
            self.assertEqual(signed.headers["signature-input"], w["signature_input"])
            self.assertEqual(signed.headers["signature"], w["signature"])
            for name, value in w["headers"].items():
                self.assertEqual(signed.headers[name], value)

    def test_read_requests_base_and_signature(self):
        key = paygate.load_private_key(V["keys"]["merchant"]["seed_base64"])
        for r in V["read_requests"]:
            signed = paygate.sign_request(
                key,
                V["access_key"],
                r["method"],
                r["path"],
                r["query"] or None,
                created=int(param(r["signature_input"], "created")),
                nonce=param(r["signature_input"], "nonce"),
            )
            self.assertEqual(signed.target, r["url_path_and_query"])
            self.assertEqual(signed.signature_base, r["signature_base"])
            self.assertEqual(signed.headers["signature-input"], r["signature_input"])
            self.assertEqual(signed.headers["signature"], r["signature"])

    def test_sealed_boxes_open(self):
        for box in V["sealed_box_open"]:
            secret = PrivateKey(base64.b64decode(box["secret_key_base64"]))
            plaintext = SealedBox(secret).decrypt(base64.b64decode(box["ciphertext_base64"]))
            self.assertEqual(plaintext.decode(), box["plaintext_utf8"])

    def test_write_envelope_opens_and_seal_round_trips(self):
        keys = V["keys"]["platform_body"]
        secret = PrivateKey(base64.b64decode(keys["secret_key_base64"]))
        envelope = json.loads(V["write_request"]["body_utf8"])
        self.assertEqual(list(envelope), ["version", "alg", "keyId", "ciphertext"])
        opened = SealedBox(secret).decrypt(base64.b64decode(envelope["ciphertext"]))
        self.assertEqual(opened.decode(), V["write_request"]["plaintext_utf8"])
        plaintext = "{\"note\": \"ação €\"}".encode()
        ours = json.loads(paygate.seal(plaintext, keys["keyId"], base64.b64decode(keys["public_key_base64"])))
        self.assertEqual(list(ours), ["version", "alg", "keyId", "ciphertext"])
        self.assertEqual((ours["version"], ours["alg"], ours["keyId"]), (1, paygate.ENVELOPE_ALG, keys["keyId"]))
        self.assertEqual(SealedBox(secret).decrypt(base64.b64decode(ours["ciphertext"])), plaintext)


class WebhookVectorTest(unittest.TestCase):
    def verifier(self, now=None):
        wk = V["keys"]["platform_webhook"]
        keys = {wk["keyid"]: base64.b64decode(wk["public_key_base64"])}
        return paygate.WebhookVerifier(keys, clock=lambda: V["now"] if now is None else now)

    def request(self, vector, **changes):
        url = vector["webhook_url"].split("://", 1)[1]
        target = url[url.index("/") :]
        path, _, query = target.partition("?")
        headers = {
            **vector["headers"],
            "signature-input": vector["signature_input"],
            "signature": vector["signature"],
        }
        request = {
            "method": "POST",
            "path": path,
            "raw_query": query if "?" in target else None,
            "headers": headers,
            "body": vector["body_utf8"].encode(),
        }
        headers.update(changes.pop("headers", {}))
        request.update(changes)
        return request

    def test_vectors_verify_and_our_base_signs_identically(self):
        wk = V["keys"]["platform_webhook"]
        platform_key = paygate.load_private_key(wk["seed_base64"])
        for vector in V["webhooks"]:
            self.assertEqual(paygate.content_digest(vector["body_utf8"].encode()), vector["headers"]["content-digest"])
            event = self.verifier().verify(**self.request(vector))
            self.assertEqual(event["eventId"], vector["headers"]["webhook-event-id"])
            # The base as we build it, signed with the vectors' platform key, is the vector signature.
            r = self.request(vector)
            values = {
                "@method": "POST",
                "@path": r["path"],
                "@query": paygate.query_component(r["raw_query"]),
                **vector["headers"],
            }
            base = paygate.signature_base(values, paygate.WEBHOOK_COMPONENTS, vector["signature_input"][9:])
            self.assertEqual(base, vector["signature_base"])
            self.assertEqual(f"platform=:{paygate.b64(platform_key.sign(base.encode()))}:", vector["signature"])

    def assertRefused(self, request, now=None, reason=""):
        with self.assertRaisesRegex(paygate.WebhookError, reason):
            self.verifier(now).verify(**request)

    def test_tampering_is_refused(self):
        vector = V["webhooks"][1]
        tampered = vector["body_utf8"].replace("125.50", "925.50").encode()
        self.assertRefused(self.request(vector, body=tampered), reason="Content-Digest")
        # A digest recomputed over the tampered body no longer matches the signature.
        recomputed = {"content-digest": paygate.content_digest(tampered)}
        self.assertRefused(self.request(vector, body=tampered, headers=recomputed), reason="signature")
        self.assertRefused(self.request(vector, path="/webhook/other"), reason="signature")
        self.assertRefused(self.request(vector, raw_query="tenant=us&sig=1"), reason="signature")
        self.assertRefused(self.request(vector, headers={"webhook-event-id": "evt_other"}), reason="eventId")
        unknown = vector["signature_input"].replace("wk_vectors_1", "wk_unknown")
        self.assertRefused(self.request(vector, headers={"signature-input": unknown}), reason="keyid")
        reordered = vector["signature_input"].replace('"@path" "@query"', '"@query" "@path"')
        self.assertRefused(self.request(vector, headers={"signature-input": reordered}), reason="components")

    def test_time_window(self):
        vector = V["webhooks"][0]
        created = int(param(vector["signature_input"], "created"))
        expires = int(param(vector["signature_input"], "expires"))
        self.verifier(now=expires).verify(**self.request(vector))
        self.verifier(now=created - 300).verify(**self.request(vector))
        self.assertRefused(self.request(vector), now=expires + 1, reason="time window")
        self.assertRefused(self.request(vector), now=created - 301, reason="time window")

    def test_a_nonce_is_accepted_once(self):
        verifier = self.verifier()
        verifier.verify(**self.request(V["webhooks"][0]))
        with self.assertRaisesRegex(paygate.WebhookError, "nonce"):
            verifier.verify(**self.request(V["webhooks"][0]))


class RecordingVerifier(paygate.WebhookVerifier):
    """Keeps every request it verified, as received, to replay tampered copies."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.received = []

    def verify(self, method, path, raw_query, headers, body):
        self.received.append((path, raw_query, dict(headers), body))
        return super().verify(method, path, raw_query, headers, body)


LIVE = os.environ.get("PAYGATE_URL")


@unittest.skipUnless(LIVE or os.environ.get("PAYGATE_REQUIRE_LIVE") == "1", "PAYGATE_URL is not set")
class LiveTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        onboarding = json.loads(Path(os.environ["PAYGATE_ONBOARDING"]).read_text())
        private_key = Path(os.environ["PAYGATE_PRIVATE_KEY"]).read_text()
        cls.client = paygate.Client.from_onboarding(os.environ["PAYGATE_URL"], private_key, onboarding)
        cls.events = queue.Queue()
        cls.rejected = []
        cls.verifier = RecordingVerifier(paygate.WebhookVerifier.from_onboarding(onboarding).keys)
        cls.receiver = paygate.webhook_receiver(cls.verifier, cls.events.put, on_reject=cls.rejected.append)
        cls.receiver_url = f"http://127.0.0.1:{cls.receiver.server_address[1]}"
        threading.Thread(target=cls.receiver.serve_forever, daemon=True).start()

    @classmethod
    def tearDownClass(cls):
        cls.receiver.shutdown()
        cls.receiver.server_close()

    def order(self, **fields):
        return {
            "merchantOrderNo": f"PY-{uuid.uuid4().hex[:16]}",
            "currency": "BRL",
            "amount": "125.50",
            "paymentMethod": {"code": "PIX"},
            "webhookUrl": f"{self.receiver_url}/webhook/payment?tenant=py",
            "attach": "cart=8812",
            **fields,
        }

    def test_create_query_list_balances(self):
        order = self.order()
        created = self.client.create_payment(order)
        self.assertEqual(created["status"], "PENDING")
        self.assertEqual(created["merchantOrderNo"], order["merchantOrderNo"])
        self.assertRegex(created["orderNo"], r"^P")
        # The same create again (a new envelope, nonce and digest) is the same order.
        self.assertEqual(self.client.create_payment(order)["orderNo"], created["orderNo"])
        self.assertEqual(self.client.get_payment(order_no=created["orderNo"])["amount"], "125.50")
        by_merchant = self.client.get_payment(merchant_order_no=order["merchantOrderNo"])
        self.assertEqual(by_merchant["orderNo"], created["orderNo"])
        page = self.client.list_payments(status="PENDING", pageSize=100)
        self.assertIn(created["orderNo"], [item["orderNo"] for item in page["items"]])
        self.assertIsInstance(self.client.balances(), list)
        # Refusals keep the platform's shape.
        with self.assertRaises(paygate.PaygateError) as missing:
            self.client.get_payment(order_no="P000000000000000000")
        self.assertEqual((missing.exception.status, missing.exception.msg), (404, "ORDER_NOT_FOUND"))
        with self.assertRaises(paygate.PaygateError) as invalid:
            self.client.create_payment(self.order(amount="-1"))
        self.assertEqual((invalid.exception.status, invalid.exception.msg), (400, "VALIDATION_FAILED"))

    def test_a_bad_signature_is_unauthorized(self):
        other = paygate.Client(
            self.client.base_url,
            self.client.access_key,
            paygate.load_private_key(base64.b64encode(os.urandom(32))),
            self.client.body_key_id,
            self.client.body_public_key,
        )
        self.assertEqual(other.request("GET", "/api/v1/balances"), (401, {"msg": "UNAUTHORIZED"}))

    def test_webhook_verifies_and_tampered_copies_do_not(self):
        created = self.client.create_payment(self.order())
        self.client.simulate_payment(created["orderNo"], "SUCCEEDED", channelTradeNo="CH-PY-1")
        event = self.events.get(timeout=30)
        self.assertEqual((event["orderNo"], event["status"]), (created["orderNo"], "SUCCEEDED"))
        self.assertEqual((event["orderType"], event["amount"], event["attach"]), ("PAYMENT", "125.50", "cart=8812"))
        self.assertEqual(self.client.get_payment(order_no=created["orderNo"])["status"], "SUCCEEDED")
        self.assertEqual(self.rejected, [])
        path, raw_query, headers, body = self.verifier.received[-1]
        self.assertEqual((path, raw_query), ("/webhook/payment", "tenant=py"))

        def send(body: bytes, **changed: str) -> int:
            sent = {k: v for k, v in headers.items() if k not in ("host", "content-length", "connection")}
            sent.update(changed)
            request = urllib.request.Request(
                f"{self.receiver_url}{path}?{raw_query}", data=body, headers=sent, method="POST"
            )
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    return response.status
            except urllib.error.HTTPError as error:
                return error.code

        tampered = body.replace(b'"SUCCEEDED"', b'"FAILED"')
        self.assertNotEqual(tampered, body)
        self.assertEqual(send(tampered), 401)
        self.assertEqual(send(tampered, **{"content-digest": paygate.content_digest(tampered)}), 401)
        self.assertEqual(send(body), 401)  # the same delivery again: its nonce was used
        self.assertEqual([str(e) for e in self.rejected][:2], ["Content-Digest does not match the body", "the signature does not verify"])
        self.assertTrue(self.events.empty())


if __name__ == "__main__":
    unittest.main(verbosity=2)
