"""The Sparkplug host's bookkeeping without a broker: payloads built by pysparkplug itself are fed to the host
as if they had arrived, and what it concludes is checked — aliases resolved against births, units read from the
properties, seq gaps and bdSeq matches noticed, a rebirth asked for a session whose birth it did not see.

Runs in the Sparkplug venv (scripts/lib/common.sh ensure_sparkplug_venv; scripts/test.sh runs it)."""

import json

import pysparkplug as spb
import pytest
from pysparkplug import _protobuf as spb_protobuf

from motion_agent_client.sparkplug_host import SparkplugHost, _format


class Arrived:
    """What paho hands the host: a topic and raw bytes."""

    def __init__(self, topic: str, payload: bytes) -> None:
        self.topic = topic
        self.payload = payload
        self.qos = 0
        self.retain = False


@pytest.fixture
def host():
    records = []
    h = SparkplugHost("plant", on_record=records.append)
    h.sent = []
    h.rebirth = lambda node: h.sent.append(("rebirth", node))
    h.records = records
    return h


def birth_with_units(metrics, seq):
    """An NBIRTH/DBIRTH body with engUnit properties, through pysparkplug's protobuf module."""
    payload = spb_protobuf.Payload()
    payload.timestamp = 1000
    payload.seq = seq
    for name, alias, datatype, value, unit in metrics:
        metric = payload.metrics.add()
        metric.name = name
        metric.alias = alias
        metric.timestamp = 1000
        metric.datatype = datatype.value
        setattr(metric, datatype.field, value)
        if unit:
            metric.properties.keys.append("engUnit")
            prop = metric.properties.values.add()
            prop.type = spb.DataType.STRING.value
            prop.string_value = unit
    return payload.SerializeToString()


def ddata(alias, value, seq, historical=False):
    metric = spb.Metric(timestamp=1500, name=None, alias=alias, datatype=spb.DataType.FLOAT, value=value,
                        is_historical=historical)
    return spb.DData(timestamp=1600, seq=seq, metrics=(metric,)).encode(include_dtypes=False)


def born(host):
    host._on_message(None, None, Arrived("spBv1.0/plant/NBIRTH/imu-7", birth_with_units(
        [("bdSeq", 1, spb.DataType.INT64, 3, None), ("Node Control/Rebirth", 2, spb.DataType.BOOLEAN, False, None)], 0)))
    host._on_message(None, None, Arrived("spBv1.0/plant/DBIRTH/imu-7/accelerometer", birth_with_units(
        [("acceleration/x", 7, spb.DataType.FLOAT, 0.0, "g")], 1)))


def test_data_by_alias_resolves_to_the_birth_name_and_unit(host):
    born(host)
    host._on_message(None, None, Arrived("spBv1.0/plant/DDATA/imu-7/accelerometer", ddata(7, -0.5, 2)))
    record = host.records[-1]
    assert record["metrics"][0]["name"] == "acceleration/x"
    assert record["metrics"][0]["unit"] == "g"
    assert record["metrics"][0]["value"] == -0.5
    assert record["metrics"][0]["timestamp"] == 1500
    assert not host.errors and not host.nodes["imu-7"].seq_gaps
    assert "acceleration/x = -0.5 g" in "\n".join(_format(record))


def test_a_seq_gap_and_historical_values_are_reported(host):
    born(host)
    host._on_message(None, None, Arrived("spBv1.0/plant/DDATA/imu-7/accelerometer", ddata(7, 1.0, 4, historical=True)))
    record = host.records[-1]
    assert record["seqGap"] is True
    assert record["metrics"][0]["historical"] is True
    assert host.nodes["imu-7"].seq_gaps == ["DDATA seq 4 after 1"]


def test_the_death_matches_the_birth_by_bdseq(host):
    born(host)
    death = spb.NDeath(timestamp=2000, bd_seq_metric=spb.Metric(timestamp=2000, name="bdSeq",
                                                               datatype=spb.DataType.INT64, value=3))
    host._on_message(None, None, Arrived("spBv1.0/plant/NDEATH/imu-7", death.encode()))
    assert host.records[-1]["matchesBirth"] is True
    assert host.nodes["imu-7"].online is False
    stale = spb.NDeath(timestamp=2000, bd_seq_metric=spb.Metric(timestamp=2000, name="bdSeq",
                                                               datatype=spb.DataType.INT64, value=2))
    host._on_message(None, None, Arrived("spBv1.0/plant/NDEATH/imu-7", stale.encode()))
    assert host.records[-1]["matchesBirth"] is False


def test_data_of_a_session_without_a_birth_asks_for_one_once(host):
    host._on_message(None, None, Arrived("spBv1.0/plant/DDATA/imu-7/accelerometer", ddata(7, 1.0, 9)))
    host._on_message(None, None, Arrived("spBv1.0/plant/DDATA/imu-7/accelerometer", ddata(7, 1.0, 10)))
    assert host.sent == [("rebirth", "imu-7")]
    assert host.records[-1]["unbornSession"] is True


def test_an_unknown_alias_or_garbage_is_an_error_not_a_crash(host):
    born(host)
    host._on_message(None, None, Arrived("spBv1.0/plant/DDATA/imu-7/accelerometer", ddata(99, 1.0, 2)))
    host._on_message(None, None, Arrived("spBv1.0/plant/DDATA/imu-7/accelerometer", b"\xff\xff\xff"))
    assert len(host.errors) == 2
    assert all("error" in r for r in host.records[-2:])


def test_state_messages_are_decoded_as_json(host):
    host._on_message(None, None, Arrived("spBv1.0/STATE/scada", json.dumps({"online": True, "timestamp": 5}).encode()))
    assert host.records[-1]["state"] == {"online": True, "timestamp": 5}
