"""A Sparkplug B 3.0 host application for MotionAgent's edge nodes, on pysparkplug's decoder.

It subscribes to ``spBv1.0/<group>/#`` and decodes every birth, data and death with pysparkplug (an
implementation independent of the agent's), resolving the aliases of NDATA/DDATA against the births before
them, and checks what a host must be able to rely on:

- ``seq``: 0 in every NBIRTH, then one more per message of the edge node (255 -> 0); a gap is reported;
- ``bdSeq``: an NDEATH is matched against the bdSeq of the NBIRTH before it;
- every metric of a birth has a name, an alias, a datatype and a timestamp; units and descriptions come from
  the metric's ``engUnit`` and ``description`` properties (read from the raw protobuf, which pysparkplug's
  ``Metric`` does not expose);
- ``is_historical`` values (store and forward) are kept apart from live ones.

With ``--primary-host-id`` it is the edge nodes' primary host: it publishes its retained STATE
(``{"online": true, "timestamp": ms}`` with the matching offline will) on ``spBv1.0/STATE/<id>``. It can ask
for a rebirth (NCMD) and write a device metric (DCMD).

Run it against an agent with ``sparkplug.enabled: true``::

    python -m motion_agent_client.sparkplug_host --host 127.0.0.1 --group motion

It prints one line per metric (``node/device metric = value unit @ time``), or with ``--json`` one JSON object
per message (what the end-to-end tests read). pysparkplug pins paho-mqtt < 2, so give it its own venv:
``pip install 'pysparkplug>=0.6.1,<0.7'`` (scripts/lib/common.sh, ensure_sparkplug_venv).
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import paho.mqtt.client as paho
import pysparkplug as spb
from pysparkplug import _protobuf as spb_protobuf  # the raw payload, for metric properties

NAMESPACE = "spBv1.0"


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class MetricInfo:
    """What a birth said about a metric."""

    name: str
    alias: Optional[int]
    datatype: str
    unit: Optional[str] = None
    description: Optional[str] = None


@dataclass
class EdgeNodeState:
    """What the host knows of one edge node."""

    bd_seq: Optional[int] = None
    last_seq: Optional[int] = None
    online: bool = False
    births: dict = field(default_factory=dict)  # device id or None -> pysparkplug Birth
    metrics: dict = field(default_factory=dict)  # (device id or None, name) -> MetricInfo
    aliases: dict = field(default_factory=dict)  # alias -> (device id or None, name)
    devices_online: set = field(default_factory=set)
    seq_gaps: list = field(default_factory=list)
    rebirth_requested: float = 0.0  # time.monotonic() of the last request


class SparkplugHost:
    """Decodes a Sparkplug group's traffic; calls ``on_record`` with one dict per message."""

    def __init__(
        self,
        group: str,
        *,
        host_id: Optional[str] = None,
        on_record: Callable[[dict], None] = lambda record: None,
    ) -> None:
        self.group = group
        self.host_id = host_id
        self.on_record = on_record
        self.nodes: dict[str, EdgeNodeState] = {}
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._state_timestamp = now_ms()
        self._connected = threading.Event()
        self._client = paho.Client(client_id=f"sparkplug-host-{host_id or 'observer'}-{now_ms()}", clean_session=True)
        self._client.on_connect = self._on_connect
        self._client.on_message = self._on_message
        # Back quickly after a broker restart: what an edge node publishes before the host is back is lost to it.
        self._client.reconnect_delay_set(min_delay=0.2, max_delay=5)
        if host_id is not None:
            self._client.will_set(self.state_topic, self._state_payload(False), qos=1, retain=True)

    # Connection and the host's own STATE

    @property
    def state_topic(self) -> str:
        return f"{NAMESPACE}/STATE/{self.host_id}"

    def _state_payload(self, online: bool) -> bytes:
        # A host's birth repeats its will's timestamp (Sparkplug 3.0, 4.2.3): one timestamp per session.
        return json.dumps({"online": online, "timestamp": self._state_timestamp}).encode()

    def connect(
        self, host: str, port: int, timeout: float = 10.0, username: Optional[str] = None, password: Optional[str] = None
    ) -> None:
        if username is not None:
            self._client.username_pw_set(username, password)
        self._client.connect(host, port, keepalive=30)
        self._client.loop_start()
        if not self._connected.wait(timeout):
            raise TimeoutError(f"no CONNACK from {host}:{port} within {timeout} s")

    def _on_connect(self, client: paho.Client, userdata: Any, flags: dict, rc: int) -> None:
        if rc != 0:
            self.errors.append(f"connection refused: {paho.connack_string(rc)}")
            return
        with self._lock:
            # What happened while the host was away is unknown: every node's session must be born again before
            # its seq can be checked (a message from a node without a birth asks for one).
            for node in self.nodes.values():
                node.last_seq = None
        client.subscribe(f"{NAMESPACE}/{self.group}/#", qos=0)
        if self.host_id is not None:
            client.subscribe(self.state_topic, qos=1)
            client.publish(self.state_topic, self._state_payload(True), qos=1, retain=True)
        self._connected.set()

    def go_offline(self) -> None:
        """The primary host leaves: its retained STATE says offline (the edge nodes stop publishing)."""
        info = self._client.publish(self.state_topic, self._state_payload(False), qos=1, retain=True)
        info.wait_for_publish(5)

    def come_online(self) -> None:
        """The primary host is back, a new session with a new timestamp."""
        self._state_timestamp = now_ms()
        self._client.will_set(self.state_topic, self._state_payload(False), qos=1, retain=True)
        info = self._client.publish(self.state_topic, self._state_payload(True), qos=1, retain=True)
        info.wait_for_publish(5)

    def close(self) -> None:
        if self.host_id is not None:
            self.go_offline()
        self._client.disconnect()
        self._client.loop_stop()

    # Commands

    def rebirth(self, node: str) -> None:
        metric = spb.Metric(
            timestamp=now_ms(), name="Node Control/Rebirth", datatype=spb.DataType.BOOLEAN, value=True
        )
        payload = spb.NCmd(timestamp=now_ms(), metrics=(metric,))
        self._client.publish(f"{NAMESPACE}/{self.group}/NCMD/{node}", payload.encode(include_dtypes=True), qos=0)

    def write(self, node: str, device: str, name: str, value: Any) -> None:
        """A DCMD writing ``value`` to ``device``'s metric ``name``, by the alias and datatype of its birth."""
        with self._lock:
            info = self.nodes[node].metrics[(device, name)]
        datatype = spb.DataType[info.datatype]
        metric = spb.Metric(timestamp=now_ms(), name=None, alias=info.alias, datatype=datatype, value=value)
        payload = spb.DCmd(timestamp=now_ms(), metrics=(metric,))
        self._client.publish(
            f"{NAMESPACE}/{self.group}/DCMD/{node}/{device}", payload.encode(include_dtypes=True), qos=0
        )

    # Decoding

    def _on_message(self, client: paho.Client, userdata: Any, message: paho.MQTTMessage) -> None:
        try:
            record = self._decode(message)
        except Exception as error:  # a host keeps going on a message it cannot read, and says so
            record = {"topic": message.topic, "error": f"{type(error).__name__}: {error}"}
            self.errors.append(record["error"])
        if record is not None:
            self.on_record(record)

    def _decode(self, message: paho.MQTTMessage) -> Optional[dict]:
        levels = message.topic.split("/")
        if levels[:2] == [NAMESPACE, "STATE"]:
            return {"topic": message.topic, "type": "STATE", "state": json.loads(message.payload)}
        topic = spb.Topic.from_str(message.topic)
        kind = topic.message_type.name  # NBIRTH, DDATA, …
        node_id = topic.edge_node_id
        device = topic.device_id
        with self._lock:
            node = self.nodes.setdefault(node_id, EdgeNodeState())
            record: dict[str, Any] = {"topic": message.topic, "type": kind, "node": node_id, "device": device}
            if kind in ("NDATA", "DDATA", "DBIRTH", "DDEATH") and node.last_seq is None:
                # A session whose NBIRTH this host did not see (it came later, or was away): its aliases and seq
                # cannot be checked. Ask for a birth (at most every 2 s), as hosts do.
                if time.monotonic() - node.rebirth_requested > 2:
                    node.rebirth_requested = time.monotonic()
                    self.rebirth(node_id)
                record["unbornSession"] = True
                return record
            birth = node.births.get(device) if kind in ("DDATA", "DCMD") else node.births.get(None)
            decoded = spb.Message.from_mqtt_message(message, birth=birth)
            payload = decoded.payload
            if kind in ("NCMD", "DCMD"):
                record["metrics"] = [self._metric(node, device, m) for m in payload.metrics]
                return record
            if kind == "NDEATH":
                bd_seq = payload.bd_seq_metric.value
                record["bdSeq"] = bd_seq
                record["matchesBirth"] = bd_seq == node.bd_seq
                if bd_seq == node.bd_seq:
                    node.online = False
                    node.devices_online.clear()
                return record
            seq = payload.seq
            record["seq"] = seq
            record["timestamp"] = payload.timestamp
            self._check_seq(node, kind, seq, record)
            if kind == "NBIRTH":
                node.births = {None: payload}
                node.metrics = {}
                node.aliases = {}
                node.online = True
                node.devices_online.clear()
                self._learn(node, None, message.payload)
                bd = next(m for m in payload.metrics if m.name == "bdSeq")
                node.bd_seq = bd.value
                record["bdSeq"] = bd.value
            elif kind == "DBIRTH":
                node.births[device] = payload
                node.devices_online.add(device)
                self._learn(node, device, message.payload)
            elif kind == "DDEATH":
                node.devices_online.discard(device)
                return record
            record["metrics"] = [self._metric(node, device, m) for m in payload.metrics]
            return record

    def _check_seq(self, node: EdgeNodeState, kind: str, seq: int, record: dict) -> None:
        if kind == "NBIRTH":
            if seq != 0:
                node.seq_gaps.append(f"NBIRTH with seq {seq}")
        elif node.last_seq is None:
            node.seq_gaps.append(f"{kind} seq {seq} before any NBIRTH")
        elif seq != (node.last_seq + 1) % 256:
            node.seq_gaps.append(f"{kind} seq {seq} after {node.last_seq}")
            record["seqGap"] = True
        node.last_seq = seq

    def _learn(self, node: EdgeNodeState, device: Optional[str], raw: bytes) -> None:
        """Names, aliases, datatypes and the engUnit/description properties of a birth's metrics."""
        proto = spb_protobuf.Payload.FromString(raw)
        for metric in proto.metrics:
            properties = dict(zip(metric.properties.keys, (v.string_value for v in metric.properties.values)))
            info = MetricInfo(
                name=metric.name,
                alias=metric.alias if metric.HasField("alias") else None,
                datatype=spb.DataType(metric.datatype).name,
                unit=properties.get("engUnit"),
                description=properties.get("description"),
            )
            node.metrics[(device, metric.name)] = info
            if info.alias is not None:
                if info.alias in node.aliases and node.aliases[info.alias] != (device, metric.name):
                    self.errors.append(f"alias {info.alias} is both {node.aliases[info.alias]} and {metric.name}")
                node.aliases[info.alias] = (device, metric.name)

    def _metric(self, node: EdgeNodeState, device: Optional[str], metric: spb.Metric) -> dict:
        info = node.metrics.get((device, metric.name))
        value = metric.value
        if isinstance(value, datetime.datetime):
            value = int(value.timestamp() * 1000)
        elif isinstance(value, bytes):
            value = value.hex()
        return {
            "name": metric.name,
            "alias": metric.alias,
            "datatype": metric.datatype.name,
            "value": None if metric.is_null else value,
            "timestamp": metric.timestamp,
            "historical": metric.is_historical,
            "unit": info.unit if info else None,
        }


def _format(record: dict) -> list[str]:
    if "error" in record:
        return [f"! {record['topic']}: {record['error']}"]
    kind = record.get("type")
    where = "/".join(x for x in (record.get("node"), record.get("device")) if x)
    if kind == "STATE":
        return [f"STATE {record['topic']}: {record['state']}"]
    if kind in ("NDEATH", "DDEATH"):
        return [f"{kind} {where}" + (f" bdSeq {record['bdSeq']}" if "bdSeq" in record else "")]
    lines = [f"{kind} {where} seq {record.get('seq')}" + (" (gap)" if record.get("seqGap") else "")]
    for metric in record.get("metrics", []):
        when = datetime.datetime.fromtimestamp((metric["timestamp"] or 0) / 1000, datetime.timezone.utc)
        unit = f" {metric['unit']}" if metric.get("unit") else ""
        history = " (historical)" if metric["historical"] else ""
        lines.append(f"  {metric['name']} = {metric['value']}{unit} @ {when:%H:%M:%S.%f}{history}")
    return lines


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=1883)
    parser.add_argument("--group", default="motion", help="sparkplug.group_id of the agents (default motion)")
    parser.add_argument("--primary-host-id", help="act as this primary host: publish its STATE")
    parser.add_argument("--username", help="the host application's MQTT account")
    parser.add_argument("--password-file", help="a file whose first line is the account's password")
    parser.add_argument("--json", action="store_true", help="one JSON object per message")
    parser.add_argument("--seconds", type=float, help="stop after this long (default: until Ctrl-C)")
    parser.add_argument(
        "--commands",
        metavar="FILE",
        help="follow FILE for commands, one JSON object a line: {\"rebirth\": node}, {\"write\": [node, device, "
        "metric, value]}, {\"offline\": true}, {\"online\": true}",
    )
    args = parser.parse_args(argv)

    output_lock = threading.Lock()

    def emit(record: dict) -> None:
        with output_lock:
            if args.json:
                print(json.dumps(record), flush=True)
            else:
                for line in _format(record):
                    print(line, flush=True)

    host = SparkplugHost(args.group, host_id=args.primary_host_id, on_record=emit)
    password = None
    if args.password_file:
        with open(args.password_file, encoding="utf-8") as f:
            password = f.readline().rstrip("\r\n")
    host.connect(args.host, args.port, username=args.username, password=password)
    emit({"type": "READY"}) if args.json else print(f"listening on {NAMESPACE}/{args.group}/#", file=sys.stderr)
    deadline = time.monotonic() + args.seconds if args.seconds else None
    done = 0
    try:
        while deadline is None or time.monotonic() < deadline:
            if args.commands:
                try:
                    with open(args.commands, encoding="utf-8") as file:
                        lines = file.read().splitlines()
                except FileNotFoundError:
                    lines = []
                for line in lines[done:]:
                    done += 1
                    command = json.loads(line)
                    if "rebirth" in command:
                        host.rebirth(command["rebirth"])
                    elif "write" in command:
                        host.write(*command["write"])
                    elif command.get("offline"):
                        host.go_offline()
                    elif command.get("online"):
                        host.come_online()
                    emit({"type": "ACK", "command": command})
            time.sleep(0.05)
    except KeyboardInterrupt:
        pass
    finally:
        with host._lock:
            summary = {
                "type": "SUMMARY",
                "errors": host.errors,
                "nodes": {
                    node_id: {"bdSeq": node.bd_seq, "online": node.online, "seqGaps": node.seq_gaps}
                    for node_id, node in host.nodes.items()
                },
            }
        emit(summary)
        host.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
