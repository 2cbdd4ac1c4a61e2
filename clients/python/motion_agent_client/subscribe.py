"""Prints every message one MotionAgent device publishes, decoded.

    python3 -m motion_agent_client.subscribe --host 127.0.0.1 --port 1883 DEVICE

One line per message: the topic, a space, the decoded payload as compact JSON (a binary batch becomes the JSON
list of its samples; with --samples every sample of a batch gets its own line). A payload that cannot be
decoded is reported on stderr and the subscriber goes on. Needs paho-mqtt (pip install paho-mqtt).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from typing import Any

from .decoder import decode, samples, topic_kind


def format_message(topic: str, payload: bytes, one_per_sample: bool = False) -> list[str]:
    """The output lines for one message; raises ValueError when the payload cannot be decoded."""

    def dumps(value: Any) -> str:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)

    if one_per_sample:
        return [f"{topic} {dumps(s)}" for s in samples(topic, payload)]
    return [f"{topic} {dumps(decode(topic, payload))}"]


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python3 -m motion_agent_client.subscribe",
        description="Print a MotionAgent device's messages, decoded (JSON and binary batches).",
    )
    p.add_argument("device", help="the device's id (device.id in its config.yaml)")
    p.add_argument("--host", default="127.0.0.1", help="the broker (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=1883, help="the broker's port (default 1883)")
    p.add_argument("--root", default="motion/{device}", help="the devices' topics.root (default motion/{device})")
    p.add_argument("--username", help="user name for the broker")
    p.add_argument("--password-file", help="a file whose first line is the password")
    p.add_argument("--cafile", help="TLS: the CA that signed the broker's certificate (turns TLS on)")
    p.add_argument("--samples", action="store_true", help="one line per sample of a batch")
    p.add_argument("--count", type=int, default=0, help="stop after this many messages (default: never)")
    p.add_argument(
        "--timeout",
        type=float,
        default=0,
        help="give up after this many seconds (exit status 2 when fewer than --count messages arrived)",
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    try:
        import paho.mqtt.client as mqtt
    except ImportError:
        print("paho-mqtt is not installed: pip install paho-mqtt", file=sys.stderr)
        return 1

    root = args.root.replace("{device}", args.device).rstrip("/")
    topic_filter = root + "/#"
    done = threading.Event()
    received = 0
    failure: list[str] = []
    lock = threading.Lock()

    def on_connect(client: Any, userdata: Any, flags: Any, reason_code: Any, properties: Any = None) -> None:
        # paho-mqtt 2.x passes a ReasonCode, 1.x an int.
        refused = reason_code.is_failure if hasattr(reason_code, "is_failure") else reason_code != 0
        if refused:
            print(f"connect to {args.host}:{args.port} refused: {reason_code}", file=sys.stderr)
            failure.append(str(reason_code))
            done.set()
            return
        client.subscribe(topic_filter, qos=1)

    def on_message(client: Any, userdata: Any, message: Any) -> None:
        nonlocal received
        topic = message.topic
        if topic_kind(topic) is None:
            return
        try:
            lines = format_message(topic, message.payload, args.samples)
        except ValueError as e:
            print(f"cannot decode: {e}", file=sys.stderr, flush=True)
            lines = []
        with lock:
            if done.is_set():
                return
            for line in lines:
                print(line, flush=True)
            received += 1
            if args.count and received >= args.count:
                done.set()

    if hasattr(mqtt, "CallbackAPIVersion"):  # paho-mqtt 2.x
        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
    else:  # paho-mqtt 1.x
        client = mqtt.Client()
    if args.username:
        password = None
        if args.password_file:
            with open(args.password_file, encoding="utf-8") as f:
                password = f.readline().rstrip("\r\n")
        client.username_pw_set(args.username, password)
    if args.cafile:
        client.tls_set(ca_certs=args.cafile)
    client.on_connect = on_connect
    client.on_message = on_message
    try:
        client.connect(args.host, args.port, keepalive=30)
    except OSError as e:
        print(
            f"connect to {args.host}:{args.port} failed: {e} — check --host and --port, or that the broker is running",
            file=sys.stderr,
        )
        return 1
    client.loop_start()
    try:
        finished = done.wait(args.timeout if args.timeout > 0 else None)
    except KeyboardInterrupt:
        finished = True
    client.disconnect()
    client.loop_stop()
    if failure:
        return 1
    if not finished or (args.count and received < args.count):
        print(f"{received} message(s) on {topic_filter} within {args.timeout} s", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
