"""A classmate on the hub's machine reads nothing a student's (or a TA's) kernel says.

Jupyter kernels speak ZeroMQ. Over TCP (jupyter_client's default) a kernel listens on ports of
127.0.0.1, and its IOPub socket publishes every cell's code (`execute_input`) and every output to
whoever connects: the messages are signed, not secret, and a subscriber needs no key. Every hub
user has a terminal on the same machine, so bob lists the listening ports of 127.0.0.1
(/proc/net/tcp, readable by anyone) and subscribes to each while alice works in her JupyterLab,
while she clicks Validate (nbgrader runs her notebook in a kernel of its own), and while a TA runs a
notebook in the course's formgrader (the grader user's JupyterLab, beside `solutions/`).

Root, chromium and configurable-http-proxy required (tests/hub/conftest.py).
"""

from __future__ import annotations

import json
import pwd
import secrets
import subprocess
import time

import pytest

import hub_clicks as B
from hub_machine import ENV

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

LISTEN_SECONDS = 25

# bob's listener: subscribe to every TCP port listening on 127.0.0.1, print what is published.
# (/proc/net/tcp names each port's owner: a student would try them all; the test keeps to the
# ports of the hub's people, leaving the rest of the machine alone.)
LISTENER = r'''
import sys, time, zmq


def listening():
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            local, state, uid = row.split()[1], row.split()[3], row.split()[7]
            if state == "0A" and uid in owners:
                ports.add(int(local.rsplit(":", 1)[1], 16))
    return ports


owners = set(sys.argv[2].split(","))
ctx = zmq.Context()
poller = zmq.Poller()
subscribed = set()
deadline = time.monotonic() + float(sys.argv[1])
while time.monotonic() < deadline:
    for port in listening() - subscribed:   # a kernel started since is subscribed to as well
        s = ctx.socket(zmq.SUB)
        s.setsockopt(zmq.SUBSCRIBE, b"")
        s.setsockopt(zmq.LINGER, 0)
        s.connect(f"tcp://127.0.0.1:{port}")
        poller.register(s, zmq.POLLIN)
        subscribed.add(port)
    for s, _ in poller.poll(1000):
        print(repr(s.recv_multipart()), flush=True)
'''

# In the logged-in user's page: start a kernel through the server's REST API and run `code` in it
# over the kernel's websocket, as JupyterLab does.
RUN_IN_KERNEL = r'''async ([base, code]) => {
  const xsrf = (document.cookie.match(/_xsrf=([^;]+)/) || [])[1] || "";
  const r = await fetch(base + "api/kernels", {method: "POST", headers: {"X-XSRFToken": xsrf,
                        "Content-Type": "application/json"}, body: "{}", credentials: "same-origin"});
  if (!r.ok) return "kernel not started: " + r.status + " " + await r.text();
  const kernel = await r.json();
  const ws = new WebSocket(location.origin.replace(/^http/, "ws") + base + "api/kernels/" + kernel.id
                           + "/channels?session_id=s" + Date.now());
  await new Promise((ok, fail) => { ws.onopen = ok; ws.onerror = fail; });
  const id = "m" + Date.now();
  ws.send(JSON.stringify({header: {msg_id: id, msg_type: "execute_request", username: "", session: "s",
                                   date: new Date().toISOString(), version: "5.3"},
                          parent_header: {}, metadata: {}, channel: "shell", buffers: [],
                          content: {code: code, silent: false, store_history: true, user_expressions: {},
                                    allow_stdin: false, stop_on_error: true}}));
  window.kernel_socket = ws;
  return await new Promise((ok) => {
    ws.onmessage = (e) => { const m = JSON.parse(e.data);
      if (m.msg_type === "stream") ok("ran: " + m.content.text); };
    setTimeout(() => ok("no output"), 60000);
  });
}'''


def _secret_code(secret: str, seconds: int = LISTEN_SECONDS + 30) -> str:
    # The answer stays on screen a while, as a student's working cell does.
    return f"import time\nfor i in range({seconds}):\n    print('answer {secret}', flush=True)\n    time.sleep(1)"


def _listen_as(user: str, hub):
    owners = ",".join(str(pwd.getpwnam(name).pw_uid) for name in [*hub.hub.users(), *(c.grader for c in hub.hub.courses)])
    return subprocess.Popen(["/usr/sbin/runuser", "-u", user, "--", str(ENV / "bin" / "python"), "-c", LISTENER,
                             str(LISTEN_SECONDS), owners], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={"PATH": "/usr/bin:/bin", "HOME": "/tmp"})


def _heard(listener) -> str:
    out, err = listener.communicate(timeout=LISTEN_SECONDS + 60)
    assert listener.returncode == 0, err[-2000:]
    return out


def _browser(p):
    return p.chromium.launch(executable_path=B.CHROMIUM, args=B.CHROMIUM_FLAGS)


@pytest.mark.parametrize("who, base", [("alice", "/user/alice/"), ("ta", "/services/cs349e/")],
                         ids=["student-jupyterlab", "ta-formgrader"])
def test_a_classmate_hears_nothing_of_a_running_kernel(hub, who, base):
    from playwright.sync_api import sync_playwright

    secret = f"S{secrets.token_hex(6)}"
    with sync_playwright() as p:
        browser = _browser(p)
        try:
            page = B.login(browser, hub.url, who, hub.passwords[who], landing=None)
            page.goto(f"{hub.url}{base}lab")
            page.wait_for_selector("#jp-main-dock-panel")
            ran = page.evaluate(RUN_IN_KERNEL, [base, _secret_code(secret)])
            assert ran.startswith("ran: answer"), ran
            heard = _heard(_listen_as("bob", hub))
        finally:
            browser.close()
    assert secret not in heard, heard[:500]


VALIDATED = {"cells": [{"cell_type": "code", "execution_count": None, "id": "work", "metadata": {}, "outputs": [],
                        "source": ""}],
             "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
             "nbformat": 4, "nbformat_minor": 5}


def test_a_classmate_hears_nothing_while_a_student_validates(hub):
    """nbgrader's Validate button runs the whole notebook in a kernel the server starts itself."""
    from playwright.sync_api import sync_playwright

    secret = f"V{secrets.token_hex(6)}"
    notebook = json.loads(json.dumps(VALIDATED))
    # within nbgrader's 30 s for a cell
    notebook["cells"][0]["source"] = _secret_code(secret, seconds=LISTEN_SECONDS + 2)
    subprocess.run(["/usr/sbin/runuser", "-u", "alice", "--", "bash", "-c", "cat > ~/mine.ipynb"],
                   input=json.dumps(notebook), text=True, check=True)
    with sync_playwright() as p:
        browser = _browser(p)
        try:
            page = B.login(browser, hub.url, "alice", hub.passwords["alice"])
            page.wait_for_selector("#jp-main-dock-panel")
            page.evaluate(r'''() => { const xsrf = (document.cookie.match(/_xsrf=([^;]+)/) || [])[1] || "";
                window.validated = fetch("/user/alice/assignments/validate", {method: "POST",
                  headers: {"X-XSRFToken": xsrf, "Content-Type": "application/x-www-form-urlencoded"},
                  body: "path=mine.ipynb", credentials: "same-origin"}).then(r => r.text()); }''')
            time.sleep(4)   # nbgrader has started the notebook's kernel
            heard = _heard(_listen_as("bob", hub))
            validated = page.evaluate("window.validated")
        finally:
            browser.close()
    result = json.loads(validated)
    assert result["success"] is True and "Timeout" not in json.dumps(result), validated[:1000]
    assert secret not in heard, heard[:500]


# In the logged-in user's page: a kernel, a value in it, and JupyterLab's debugger turned on and
# off again (the bug button sends these debug requests on the kernel's control channel).
DEBUG_ON_AND_OFF = r'''async ([base, code]) => {
  const xsrf = (document.cookie.match(/_xsrf=([^;]+)/) || [])[1] || "";
  const r = await fetch(base + "api/kernels", {method: "POST", headers: {"X-XSRFToken": xsrf,
                        "Content-Type": "application/json"}, body: "{}", credentials: "same-origin"});
  const kernel = await r.json();
  const ws = new WebSocket(location.origin.replace(/^http/, "ws") + base + "api/kernels/" + kernel.id
                           + "/channels?session_id=d" + Date.now());
  await new Promise((ok, fail) => { ws.onopen = ok; ws.onerror = fail; });
  const waiting = {};
  ws.onmessage = (e) => { const m = JSON.parse(e.data); const w = waiting[m.parent_header.msg_id];
    if (w && m.msg_type.endsWith("_reply")) w(m.msg_type + " " + JSON.stringify(m.content).slice(0, 200)); };
  let n = 0;
  const send = (channel, type, content) => new Promise((ok) => {
    const id = "d" + Date.now() + "-" + (n++);
    waiting[id] = ok;
    setTimeout(() => ok("no reply"), 30000);
    ws.send(JSON.stringify({header: {msg_id: id, msg_type: type, username: "", session: "d",
                                     date: new Date().toISOString(), version: "5.3"},
                            parent_header: {}, metadata: {}, channel: channel, buffers: [], content: content}));
  });
  const said = [];
  said.push(await send("shell", "execute_request", {code: code, silent: false, store_history: true,
                       user_expressions: {}, allow_stdin: false, stop_on_error: true}));
  const dap = (seq, command, args) => send("control", "debug_request",
                                           {type: "request", seq: seq, command: command, arguments: args});
  said.push(await dap(1, "initialize", {clientID: "jupyterlab", clientName: "JupyterLab", adapterID: "python",
                                        pathFormat: "path", linesStartAt1: true, columnsStartAt1: true,
                                        supportsVariableType: true, supportsVariablePaging: true,
                                        supportsRunInTerminalRequest: true, locale: "en"}));
  said.push(await dap(2, "attach", {}));
  said.push(await dap(3, "disconnect", {restart: false, terminateDebuggee: false}));
  window.kernel_socket = ws;
  return said;
}'''

# bob, at any port of 127.0.0.1 the kernel's user listens on: a debug adapter that lets him in.
ATTACH = r'''
import json, socket, sys

owner = sys.argv[1]
ports = set()
for table in ("/proc/net/tcp", "/proc/net/tcp6"):
    for row in open(table).read().splitlines()[1:]:
        f = row.split()
        if f[3] == "0A" and f[7] == owner:
            ports.add(int(f[1].rsplit(":", 1)[1], 16))


def request(s, seq, command, args):
    body = json.dumps({"seq": seq, "type": "request", "command": command, "arguments": args}).encode()
    s.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)


def replies(s):
    data = b""
    s.settimeout(3)
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    return data.decode("utf-8", "replace")


for port in sorted(ports):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        request(s, 1, "initialize", {"adapterID": "python", "clientID": "bob"})
        request(s, 2, "attach", {})
        request(s, 3, "evaluate", {"context": "repl", "expression":
                "__import__('sys').modules['__main__'].__dict__.get('answer')"})
        print(port, replies(s), flush=True)
        s.close()
    except OSError as err:
        print(port, "refused", err, flush=True)
'''


def test_a_classmate_cannot_take_over_a_kernel_whose_debugger_was_used(hub):
    """JupyterLab's debugger starts debugpy in the kernel, listening on a port of 127.0.0.1 with no
    password; once she turns the debugger off, the kernel waits there for the next debugger: any
    account that attaches runs code in her kernel, as her."""
    from playwright.sync_api import sync_playwright

    secret = f"D{secrets.token_hex(6)}"
    with sync_playwright() as p:
        browser = _browser(p)
        try:
            page = B.login(browser, hub.url, "alice", hub.passwords["alice"])
            page.wait_for_selector("#jp-main-dock-panel")
            said = page.evaluate(DEBUG_ON_AND_OFF, ["/user/alice/", f"answer = '{secret}'"])
            assert said[0].startswith("execute_reply"), said
            tried = subprocess.run(["/usr/sbin/runuser", "-u", "bob", "--", str(ENV / "bin" / "python"), "-c", ATTACH,
                                    str(pwd.getpwnam("alice").pw_uid)], capture_output=True, text=True,
                                   env={"PATH": "/usr/bin:/bin", "HOME": "/tmp"}, timeout=300)
        finally:
            browser.close()
    assert tried.returncode == 0, tried.stderr[-2000:]
    assert secret not in tried.stdout, (said, tried.stdout[-2000:])
