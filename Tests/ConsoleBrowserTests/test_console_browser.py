"""The console in a real browser (headless Chromium) against a real mosquitto, real agents on the simulated IMU
and the real `motion-agent console`: devices appear; the attitude and the plots move as a simulated device turns;
an edit converges on every device and shows; a refusal shows with its reason; a device going offline shows;
hostile device text does not execute; a watched device moves again after a broker outage. MOTION_AGENT_BINARY
names the motion-agent to test."""

import json
import math
import os
import socket
import ssl
import subprocess
import time
import urllib.request

import pytest

from console_harness import Fleet, browser, free_port, probe, wait_for

HOSTILE = '<img src=x onerror="window.__pwned=1">'
HOSTILE_REASON = '<script>window.__pwned=2</script><img src=y onerror="window.__pwned=3">'


@pytest.fixture(scope="module")
def fleet():
    binary = os.environ.get("MOTION_AGENT_BINARY", ".build/debug/motion-agent")
    fleet = Fleet(binary)
    try:
        fleet.start_broker()
        # One device turning, its device motion and raw streams at 50 Hz; two quiet ones in group lab.
        fleet.start_agent("turner", scenario="rotating", streams={
            "device-motion": "{rate_hz: 50}", "accelerometer": "{rate_hz: 50}", "gyroscope": "{rate_hz: 50}",
            "pedometer": "{rate_hz: 1}", "activity": "{rate_hz: 1}"})
        fleet.start_agent("lab-1", groups=["lab"], streams={"accelerometer": "{rate_hz: 1}"})
        fleet.start_agent("lab-2", groups=["lab"], streams={"accelerometer": "{rate_hz: 1}"})
        fleet.start_console()
        yield fleet
    finally:
        fleet.close()


@pytest.fixture(scope="module")
def page(fleet):
    driver = browser()
    try:
        # The printed address carries the token: it sets the session cookie and leads to the page.
        driver.get(f"{fleet.console_url}/?token={fleet.console_token}")
        wait_for("the page's first message", lambda: probe(driver, "window.consoleProbe && window.consoleProbe.hello"))
        yield driver
    finally:
        driver.quit()


def row_text(driver, device, cell):
    return driver.execute_script(
        "const tr = [...document.querySelectorAll('#fleet-rows .row')].find(r => r.dataset.device === arguments[0]);"
        "return tr ? tr.querySelector('.' + arguments[1]).textContent : null;", device, cell)


def test_devices_appear(page):
    for device in ("turner", "lab-1", "lab-2"):
        wait_for(f"{device} online in the fleet view", lambda: row_text(page, device, "state") == "online")
    assert page.current_url.endswith("/"), "the token's link should lead to the page without the token"
    assert row_text(page, "turner", "agent") == "0.1.0"
    assert page.execute_script("return document.querySelector('#mode').textContent") == "can change"


def test_attitude_and_plots_move_as_the_device_turns(page):
    page.execute_script("location.hash = '#/device/turner'")
    first = wait_for("the attitude drawn", lambda: probe(page, "window.consoleProbe.attitude"))
    plots = wait_for("both plots drawn", lambda: (lambda p: p if p.get("acceleration") and p.get("rotation") and
                                                  p["rotation"]["points"] > 10 else None)(probe(page, "window.consoleProbe.plots")))
    # The script turns for 2–6 s and pauses 1–2 s between turns (Sources/Simulation/RotationMotion.swift): a fixed
    # 1.5 s window could fall in a pause (it did, four runs in a row, once start-up took a little less). Watched
    # over a span longer than a pause instead, with the same bars: turned more than 5°, a rotation rate shown.
    def turned():
        second = probe(page, "window.consoleProbe.attitude")
        dot = abs(sum(first[k] * second[k] for k in "wxyz"))
        return second if math.degrees(2 * math.acos(min(1.0, dot))) > 5 else None
    second = wait_for("the drawn attitude turned more than 5° on the rotating device", turned, timeout=10)
    assert first["screen"] != second["screen"], "the rendered device did not move on the canvas"
    later = wait_for("a rotation rate shown", lambda: (lambda p: p if max(abs(v) for v in p["rotation"]["last"]) > 0.05
                                                       else None)(probe(page, "window.consoleProbe.plots")), timeout=10)
    assert later["rotation"]["end"] > plots["rotation"]["end"], "the rotation plot did not advance"
    assert later["acceleration"]["points"] > 20
    # The stream table shows requested and effective rates, and the configuration its sources.
    streams = page.execute_script("return [...document.querySelectorAll('#streams tbody tr')].map(r => r.textContent)")
    assert any(s.startswith("device-motion") and "50.00" in s for s in streams), streams
    settings = page.execute_script(
        "return [...document.querySelectorAll('#settings tbody tr')].map(r => [...r.children].map(c => c.textContent))")
    assert ["streams.device-motion.rate_hz", "50", "config.yaml", ""] in settings, settings[:5]


def test_an_edit_converges_on_every_device_and_shows(page, fleet):
    page.execute_script("location.hash = '#/change'")
    page.find_element("id", "edit-layer").send_keys("fleet")
    key = page.find_element("id", "edit-key")
    key.clear(); key.send_keys("streams.magnetometer.rate_hz")
    value = page.find_element("id", "edit-value")
    value.clear(); value.send_keys("5")
    page.find_element("id", "edit-set").click()
    wait_for("the edit published", lambda: "published fleet v" in page.find_element("id", "edit-result").text)
    convergence = wait_for("every device to apply the edit", lambda: (
        lambda c: c if c and c["total"] == 3 and c["applied"] == 3 else None)(probe(page, "window.consoleProbe.convergence")))
    assert convergence["refused"] == 0
    summary = page.find_element("id", "convergence-summary").text
    assert summary.startswith(f"3 of 3 applied fleet v{convergence['version']}"), summary
    page.execute_script("location.hash = '#/'")
    wait_for("the fleet view to show the version", lambda: f"fleet v{convergence['version']}" in (row_text(page, "lab-2", "desired") or ""))
    # An invalid value is refused by the console before anything is published, with the schema's reason.
    page.execute_script("location.hash = '#/change'")
    value = page.find_element("id", "edit-value")
    value.clear(); value.send_keys("5000")
    page.find_element("id", "edit-set").click()
    result = wait_for("the refusal", lambda: (lambda t: t if t.startswith("refused") else None)(page.find_element("id", "edit-result").text))
    assert "5000" in result and "rate_hz" in result, result


def test_a_refusal_shows_with_its_reason(page, fleet):
    # A document the device refuses (published around the console, as anyone with the topic could).
    fleet.publish("motion/lab-1/desired", json.dumps({"version": 3, "streams": {"gyroscope": {"qos": 7}}}))
    page.execute_script("location.hash = '#/'")
    text = wait_for("lab-1's refusal in the fleet view", lambda: (lambda t: t if t and "refused device v" in t else None)(row_text(page, "lab-1", "problems")))
    assert "streams.gyroscope.qos: 7 is out of range" in text, text


def test_a_device_going_offline_shows(page, fleet):
    fleet.stop_agent("lab-2")
    wait_for("lab-2 offline", lambda: row_text(page, "lab-2", "state") == "offline", timeout=20)
    assert "problem" in page.execute_script(
        "return [...document.querySelectorAll('#fleet-rows .row')].find(r => r.dataset.device === 'lab-2').className")


def test_hostile_device_text_does_not_execute(page, fleet):
    status = {"state": "online", "device": HOSTILE, "agentVersion": "<b>1</b>", "schemaVersion": 1, "bootCount": 1,
              "time": time.time(), "configuration": {"groups": ["<i>g</i>"], "desired": {"fleet": 1},
              "refused": {"layer": "fleet", "version": 2, "reason": HOSTILE_REASON, "time": time.time()}}}
    fleet.publish(f"motion/{HOSTILE}/status", json.dumps(status))
    wait_for("the hostile device's row", lambda: row_text(page, HOSTILE, "problems"))
    assert row_text(page, HOSTILE, "agent") == "<b>1</b>"
    assert HOSTILE_REASON in row_text(page, HOSTILE, "problems")
    page.execute_script("location.hash = arguments[0]", "#/device/" + page.execute_script("return encodeURIComponent(arguments[0])", HOSTILE))
    wait_for("the hostile device's view", lambda: page.find_element("id", "device-title").text == HOSTILE)
    time.sleep(0.5)
    assert page.execute_script("return window.__pwned") is None, "device text ran as code"
    assert page.execute_script("return document.querySelectorAll('main img, main script, main b, main i').length") == 0


def test_without_the_token_the_page_is_read_only_and_other_origins_change_nothing(page, fleet):
    documents = lambda: page.execute_script(
        "return [...document.querySelectorAll('#documents tbody tr')].map(r => r.textContent)")
    if not any(row.startswith("motion/fleet/desired") for row in documents()):  # run alone (-k)
        fleet.publish("motion/fleet/desired", json.dumps({"version": 1, "metrics": {"interval_s": 5}}))
    before = wait_for("the fleet document listed", lambda: (
        lambda rows: rows if any(r.startswith("motion/fleet/desired") for r in rows) else None)(documents()))
    # Another origin (localhost is another site than 127.0.0.1 to the browser: the SameSite=Strict cookie stays
    # behind) posts a valid edit the way a cross-site form could, without a preflight.
    other = page.current_url.replace("127.0.0.1", "localhost").split("#")[0]
    page.get(other)
    wait_for("the page by its other name", lambda: probe(page, "window.consoleProbe && window.consoleProbe.hello"))
    assert page.find_element("id", "mode").text == "read-only"
    assert page.find_element("id", "edit-set").get_attribute("disabled") is not None
    status = page.execute_script(
        "return fetch(arguments[0] + '/api/desired', {method: 'POST', credentials: 'include',"
        " headers: {'Content-Type': 'application/json'}, body: JSON.stringify({layer: 'fleet', set: {'metrics.interval_s': '9'}})})"
        ".then(r => r.status);", other.rstrip("/"))
    assert status == 401, f"a change without the token was answered {status}"
    page.execute_script(
        "fetch(arguments[0] + '/api/desired', {method: 'POST', mode: 'no-cors', credentials: 'include',"
        " headers: {'Content-Type': 'text/plain'}, body: JSON.stringify({layer: 'fleet', clear: true})});",
        fleet.console_url)
    time.sleep(1)
    page.get(f"{fleet.console_url}/#/change")
    wait_for("the page again", lambda: probe(page, "window.consoleProbe && window.consoleProbe.hello"))
    assert page.find_element("id", "mode").text == "can change"
    after = wait_for("the documents", documents)
    assert after == before, f"a cross-origin request changed a document: {before} → {after}"


def test_a_watched_device_moves_again_after_a_broker_outage(page, fleet):
    # Last: the outage empties the broker's retained store, which the tests above read.
    page.execute_script("location.hash = '#/device/turner'")
    before = wait_for("the rotation plot drawn", lambda: (lambda p: p if p.get("rotation") else None)(
        probe(page, "window.consoleProbe.plots")))
    fleet.restart_broker()
    after_restart = probe(page, "window.consoleProbe.plots")["rotation"]["end"]
    # The agents reconnect and the console's fleet connection and the device's own both come back: the plot
    # advances past where it stood when the broker came back, and the fleet view says online again.
    wait_for("the device's plot moving again after the outage", lambda: probe(
        page, "window.consoleProbe.plots")["rotation"]["end"] > max(after_restart, before["rotation"]["end"]) + 1,
        timeout=30)
    page.execute_script("location.hash = '#/'")
    wait_for("turner online again", lambda: row_text(page, "turner", "state") == "online", timeout=30)


def test_beyond_loopback_the_console_needs_tls_and_serves_the_live_page_over_it(fleet):
    """A non-loopback listener without TLS is refused at start; with --tls-certificate and --tls-key the page, its
    live WebSocket (wss) and the session cookie (Secure) work over HTTPS in the browser, and plain HTTP on that
    port gets no answer."""
    binary = os.environ.get("MOTION_AGENT_BINARY", ".build/debug/motion-agent")
    refused = subprocess.run(
        [binary, "console", "--port", str(fleet.port), "--listen", "0.0.0.0:1", "--host-name", "console.lan"],
        capture_output=True, text=True, timeout=30)
    assert refused.returncode != 0 and "--tls-certificate" in refused.stderr, refused.stderr

    certificate, key, spki = fleet.test_certificate()
    # A second console beside the fixture's (whose address the fleet keeps for the other tests).
    plain_console = (fleet.console_url, fleet.console_token, fleet.console_port)
    fleet.start_console("--tls-certificate", certificate, "--tls-key", key, name="console-tls")
    url, token, port = fleet.console_url, fleet.console_token, fleet.console_port
    fleet.console_url, fleet.console_token, fleet.console_port = plain_console
    assert url.startswith("https://"), url

    # Python's own TLS client, trusting only this certificate: the page over HTTPS; plain HTTP gets no answer.
    context = ssl.create_default_context(cafile=certificate)
    with urllib.request.urlopen(f"{url}/", context=context, timeout=10) as response:
        assert response.status == 200 and b"MotionAgent console" in response.read()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as plain:
        plain.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        try:
            answer = plain.recv(4096)
        except (ConnectionResetError, socket.timeout):
            answer = b""
        assert not answer.startswith(b"HTTP/"), answer

    driver = browser(trust_spki=spki, profile=os.path.join(fleet.directory, "profile-tls"))
    try:
        driver.get(f"{url}/?token={token}")
        wait_for("the page's first message over wss", lambda: probe(driver, "window.consoleProbe && window.consoleProbe.hello"))
        wait_for("turner online over HTTPS", lambda: row_text(driver, "turner", "state") == "online")
        cookie = driver.get_cookie("motion_console")
        assert cookie and cookie["secure"] and cookie["httpOnly"], cookie
        assert driver.current_url == f"{url}/"
    finally:
        driver.quit()
