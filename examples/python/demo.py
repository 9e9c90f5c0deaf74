"""The Python client end to end against a running sandbox platform: a webhook receiver, a
payment created, paid through the sandbox helper, its signed webhook received and verified,
then the order queried, the list and the balances read.

    PAYGATE_URL=http://127.0.0.1:8080 PAYGATE_PRIVATE_KEY=merchant-keys/private.pem \
    PAYGATE_ONBOARDING=merchant.json /usr/bin/python3 examples/python/demo.py
"""

from __future__ import annotations

import json
import os
import queue
import threading
import uuid
from pathlib import Path

import paygate


def main() -> None:
    onboarding = json.loads(Path(os.environ["PAYGATE_ONBOARDING"]).read_text())
    private_key = Path(os.environ["PAYGATE_PRIVATE_KEY"]).read_text()
    client = paygate.Client.from_onboarding(os.environ.get("PAYGATE_URL", "http://127.0.0.1:8080"), private_key, onboarding)

    events: queue.Queue = queue.Queue()
    receiver = paygate.webhook_receiver(
        paygate.WebhookVerifier.from_onboarding(onboarding),
        events.put,
        port=int(os.environ.get("RECEIVER_PORT", "0")),
        on_reject=lambda error: print(f"webhook refused: {error}"),
    )
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    webhook_url = f"http://127.0.0.1:{receiver.server_address[1]}/webhook/payment"
    print(f"receiver listening on {webhook_url}")

    payment = client.create_payment(
        {
            "merchantOrderNo": f"PY-{uuid.uuid4().hex[:12]}",
            "currency": "BRL",
            "amount": "10.00",
            "paymentMethod": {"code": "PIX"},
            "webhookUrl": webhook_url,
        }
    )
    print(f"created {payment['orderNo']} ({payment['status']}); the payer would pay at {payment.get('cashierUrl')}")

    client.simulate_payment(payment["orderNo"], "SUCCEEDED")  # the sandbox's stand-in for the payer
    event = events.get(timeout=30)
    print(f"webhook verified: {event['eventId']} {event['orderNo']} {event['status']}")

    print("query:", client.get_payment(order_no=payment["orderNo"])["status"])
    print("latest orders:", [item["orderNo"] for item in client.list_payments(pageSize=5)["items"]])
    print("balances:", json.dumps(client.balances()))
    receiver.shutdown()


if __name__ == "__main__":
    try:
        main()
    except paygate.PaygateError as error:
        raise SystemExit(f"the platform refused: {error}")
