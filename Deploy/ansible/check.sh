#!/usr/bin/env bash
# Checks the playbook without touching this machine's system:
#   1. ansible-playbook --syntax-check with the example inventory;
#   2. a real run over connection=local into a throw-away root (motion_agent_root, motion_agent_manage_system
#      false), with the example group_vars and an ansible-vault-encrypted copy of vault.yml.example, as the
#      example host press-01.plant.example; then checks the staged files, their modes and the templated
#      config (which the agent's check-config must accept);
#   3. the same run again must change nothing (idempotence).
#
#   Deploy/ansible/check.sh [path/to/motion-agent]
# Uses ansible-playbook from PATH, or installs ansible-core into a temporary virtualenv (pip, PyPI).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
binary="${1:-$repo/.build/debug/motion-agent}"
[ -x "$binary" ] || { echo "check.sh: $binary is not executable: swift build --product motion-agent, or pass a path" >&2; exit 1; }

work="$(mktemp -d)"
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fail() { echo "check.sh: FAILED: $*" >&2; exit 1; }

if command -v ansible-playbook >/dev/null 2>&1; then
    bin="$(dirname "$(command -v ansible-playbook)")"
else
    echo "installing ansible-core into $work/venv"
    python3 -m venv "$work/venv" && "$work/venv/bin/pip" install -q ansible-core
    bin="$work/venv/bin"
fi
export ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0 ANSIBLE_LOCALHOST_WARNING=0
"$bin/ansible-playbook" --version | sed -n 1p

# 1. syntax
(cd "$here" && "$bin/ansible-playbook" -i inventory/hosts.ini site.yml --syntax-check)
(cd "$here" && "$bin/ansible-playbook" desired.yml --syntax-check)

# 2. a local run into a staging root, with the example group_vars and an encrypted vault
root="$work/root"
mkdir -p "$root" "$work/inventory"
cp -r "$here/inventory/group_vars" "$work/inventory/"
cp "$here/inventory/group_vars/motion_agents/vault.yml.example" "$work/inventory/group_vars/motion_agents/vault.yml"
echo "check-vault-password" > "$work/vault-pass"
"$bin/ansible-vault" encrypt --vault-password-file "$work/vault-pass" "$work/inventory/group_vars/motion_agents/vault.yml" >/dev/null
grep -q '^.ANSIBLE_VAULT;' "$work/inventory/group_vars/motion_agents/vault.yml" || fail "ansible-vault did not encrypt vault.yml"
cat > "$work/inventory/hosts.ini" <<EOF
[motion_agents]
press-01.plant.example ansible_connection=local ansible_python_interpreter=$(command -v python3) motion_agent_groups='["line-2", "calibration-rig"]'
EOF
# An operator key: its public line goes to the devices (motion_agent_trusted_keys), desired.yml signs with it.
trust_line="$("$binary" keys generate --output "$work/operator.key" --id ansible-check 2>/dev/null)"
printf '{"motion_agent_trusted_keys": ["%s"]}\n' "$trust_line" > "$work/keys.json"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj "/CN=check CA" \
    -keyout "$work/ca.key" -out "$work/ca.crt" 2>/dev/null
play() {
    "$bin/ansible-playbook" -i "$work/inventory/hosts.ini" "$here/site.yml" \
        --vault-password-file "$work/vault-pass" \
        -e ansible_become=false -e motion_agent_manage_system=false -e "motion_agent_root=$root" \
        -e "motion_agent_binary=$binary" -e "motion_agent_tls_ca_file=$work/ca.crt" \
        -e '{"motion_agent_streams": {"accelerometer": {"rate_hz": 100}, "submersion": {"enabled": true}}}' \
        -e "@$work/keys.json"
}
play | tee "$work/run1.log" | grep -E "fatal|FAILED|msg|RECAP|press-01" | tail -8
grep -q 'failed=0' "$work/run1.log" || fail "the first run failed (see above)"

mode() { stat -c '%a' "$1"; }
for f in usr/local/bin/motion-agent:755 etc/systemd/system/motion-agent.service:644 \
    etc/udev/rules.d/99-motion-agent-iio.rules:644 etc/motion-agent:750 etc/motion-agent/config.yaml:640 \
    etc/motion-agent/mqtt-password:640 etc/motion-agent/ca.crt:644 etc/motion-agent/trusted.keys:644; do
    path="$root/${f%%:*}"
    [ -e "$path" ] || fail "${f%%:*} was not installed"
    [ "$(mode "$path")" = "${f##*:}" ] || fail "${f%%:*} has mode $(mode "$path"), expected ${f##*:}"
done
cmp -s "$binary" "$root/usr/local/bin/motion-agent" || fail "the installed binary differs from $binary"
cmp -s "$repo/Deploy/motion-agent.service" "$root/etc/systemd/system/motion-agent.service" || fail "the unit differs"
[ "$(cat "$root/etc/motion-agent/mqtt-password")" = "a-long-random-password" ] || fail "the password file does not hold the vault's password"
config="$root/etc/motion-agent/config.yaml"
grep -qx '  id: "press-01.plant.example"' "$config" || fail "device.id is not the inventory name"
grep -qx '  username: "press-01.plant.example"' "$config" || fail "mqtt.username is not the device id"
grep -qx '  groups: \["line-2", "calibration-rig"\]' "$config" || fail "control.groups is not the host's motion_agent_groups"
grep -qx '  trusted_keys_file: /etc/motion-agent/trusted.keys' "$config" || fail "control.trusted_keys_file is not set"
[ "$(cat "$root/etc/motion-agent/trusted.keys")" = "$trust_line" ] || fail "trusted.keys does not hold the operator's line"
# The agent itself judges the templated YAML, with the paths pointed into the staging root.
sed "s|/etc/motion-agent/|$root/etc/motion-agent/|" "$config" > "$work/staged-config.yaml"
"$binary" check-config "$work/staged-config.yaml" > "$work/effective.txt" || fail "motion-agent check-config refused the templated config"
grep -q 'press-01.plant.example' "$work/effective.txt" || fail "the effective configuration lacks the device id"
echo "staged files, modes, vault password and templated config: ok"

# 3. idempotence
play > "$work/run2.log"
grep -Eq 'changed=0 .*failed=0' "$work/run2.log" || { tail -5 "$work/run2.log"; fail "the second run changed something"; }
echo "second run: changed=0"

# 4. desired.yml against a real mosquitto: the retained fleet document it publishes is what was asked for.
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
printf 'listener %s 127.0.0.1\nallow_anonymous true\n' "$port" > "$work/mosquitto.conf"
/usr/sbin/mosquitto -c "$work/mosquitto.conf" > "$work/mosquitto.log" 2>&1 &
broker_pid=$!
trap 'kill "$broker_pid" 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
sleep 0.5
"$bin/ansible-playbook" "$here/desired.yml" -e "motion_agent_cli=$binary" -e "motion_agent_broker_port=$port" \
    -e motion_agent_desired_wait=0 -e "motion_agent_signing_key=$work/operator.key" \
    -e '{"motion_agent_desired_settings": {"streams.accelerometer.rate_hz": 100, "streams.magnetometer.enabled": false}}' \
    | tee "$work/desired.log" | grep -E "fatal|FAILED|published|RECAP" | tail -4
grep -q 'failed=0' "$work/desired.log" || fail "desired.yml failed (see above)"
document="$("$binary" fleet get --fleet --port "$port")"
[ "$document" = '{"streams":{"accelerometer":{"rate_hz":100},"magnetometer":{"enabled":false}},"version":1}' ] \
    || fail "the retained fleet document is $document"
# Signed: another key cannot build on it unless told to trust the operator's key (the devices' trusted.keys).
"$binary" keys generate --output "$work/other.key" --id other > /dev/null 2>&1
if "$binary" fleet set --fleet --port "$port" --signing-key "$work/other.key" --wait 0 metrics.interval_s=30 > "$work/other.log" 2>&1; then
    fail "fleet set with another key built on the signed document without verifying it"
fi
"$binary" fleet set --fleet --port "$port" --signing-key "$work/other.key" --trusted-keys "$root/etc/motion-agent/trusted.keys" \
    --wait 0 metrics.interval_s=30 > "$work/other.log" 2>&1 || { cat "$work/other.log"; fail "fleet set --trusted-keys refused the operator's document"; }
echo "desired.yml published the signed fleet document: ok"
echo "check.sh: all checks passed"
