#!/usr/bin/env python3
"""Drives nmt-serve's page in headless Chromium over the DevTools protocol, as a user
would: types a sentence into the text box, clicks Translate, waits for the translation
and the heatmap, then clicks the second n-best entry. Prints what the page shows as
JSON; --screenshot also saves a PNG of the page. Standard library only (python3 is
already a test dependency, see scripts/install-deps.sh).

With --prefix, it then types PREFIX into the prefix box (interactive translation) and
waits for the completion that starts with it.

Usage: page_check.py CHROMIUM URL SENTENCE [--prefix PREFIX] [--screenshot OUT.png]
"""
import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request


class WebSocket:
    """The client side of RFC 6455, enough for the DevTools protocol (text frames)."""

    def __init__(self, url):
        parts = urllib.parse.urlparse(url)
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {parts.path} HTTP/1.1\r\nHost: {parts.hostname}:{parts.port}\r\n"
                           f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        response = b""
        while b"\r\n\r\n" not in response:
            response += self.sock.recv(4096)
        if b" 101 " not in response.split(b"\r\n", 1)[0]:
            raise RuntimeError("websocket handshake refused: " + response.decode(errors="replace"))
        self.buffer = response.split(b"\r\n\r\n", 1)[1]

    def _read(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise RuntimeError("DevTools connection closed")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def send(self, text):
        data = text.encode()
        header = bytearray([0x81])  # FIN + text
        if len(data) < 126:
            header.append(0x80 | len(data))
        elif len(data) < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", len(data))
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", len(data))
        mask = os.urandom(4)
        self.sock.sendall(bytes(header) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def receive(self):
        message = b""
        while True:
            first, second = self._read(2)
            length = second & 0x7F
            if length == 126:
                length = struct.unpack(">H", self._read(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self._read(8))[0]
            mask = self._read(4) if second & 0x80 else None
            payload = self._read(length)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            opcode = first & 0x0F
            if opcode == 8:
                raise RuntimeError("DevTools closed the connection")
            if opcode in (9, 10):  # ping / pong: nothing to do for a short session
                continue
            message += payload
            if first & 0x80:
                return message.decode()


class DevTools:
    def __init__(self, url):
        self.ws = WebSocket(url)
        self.next_id = 0
        self.events = []

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.receive())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression, seconds=60):
        deadline = time.time() + seconds
        while time.time() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.1)
        page = self.evaluate("JSON.stringify({source: (document.getElementById('source') || {}).value, "
                             "error: (document.getElementById('error') || {}).textContent, "
                             "text: document.body.innerText.slice(0, 400)})")
        raise RuntimeError(f"timed out waiting for: {expression}; the page: {page}")

    def click(self, selector):
        box = self.evaluate(f"(function () {{ var r = document.querySelector({json.dumps(selector)})"
                            ".getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()")
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1)


def start_chromium(chromium, profile):
    process = subprocess.Popen([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0",
                                f"--user-data-dir={profile}", "--window-size=1200,1000", "about:blank"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        line = process.stderr.readline()
        if "DevTools listening on " in line:
            browser = line.split("DevTools listening on ", 1)[1].strip()
            return process, urllib.parse.urlparse(browser).netloc
        if not line and process.poll() is not None:
            break
    process.kill()
    raise RuntimeError("chromium did not open its DevTools port")


# What the page shows: the translation lines, the n-best entries, the heatmap's size.
STATE = """JSON.stringify({
  translation: Array.from(document.querySelectorAll('#translation div.line')).map(function (d) { return d.textContent; }),
  nbest: Array.from(document.querySelectorAll('#nbest li')).map(function (li) { return li.textContent; }),
  chosen: Array.from(document.querySelectorAll('#nbest li')).findIndex(function (li) { return li.className === 'chosen'; }),
  rows: document.querySelectorAll('#heatmap table.heatmap tr').length - 1,
  columns: document.querySelectorAll('#heatmap table.heatmap tr:first-child th.source').length,
  cells: document.querySelectorAll('#heatmap td.cell').length,
  views: document.querySelectorAll('#heatmap select option').length,
  error: document.getElementById('error').textContent
})"""


def main():
    chromium, url, sentence = sys.argv[1:4]
    screenshot = sys.argv[sys.argv.index("--screenshot") + 1] if "--screenshot" in sys.argv else None
    prefix = sys.argv[sys.argv.index("--prefix") + 1] if "--prefix" in sys.argv else None
    profile = tempfile.mkdtemp(prefix="nmt-page-check-")
    process, address = start_chromium(chromium, profile)
    try:
        pages = json.load(urllib.request.urlopen(f"http://{address}/json/list"))
        tools = DevTools(next(p for p in pages if p["type"] == "page")["webSocketDebuggerUrl"])
        tools.call("Page.enable")
        tools.call("Page.navigate", url=url)
        # The model line arrives from /v1/model after the load and moves the button down:
        # wait for it, or a click aimed at the button's old place can miss under load.
        tools.wait_for("document.readyState === 'complete' && !!document.getElementById('translate') && "
                       "document.getElementById('model').textContent !== ''")
        tools.evaluate("document.getElementById('source').focus()")
        tools.call("Input.insertText", text=sentence)
        tools.click("#translate")
        tools.wait_for("document.querySelectorAll('#heatmap td.cell').length > 0 || "
                       "document.getElementById('error').textContent !== ''")
        first = json.loads(tools.evaluate(STATE))
        second = None
        if len(first["nbest"]) > 1:
            tools.click("#nbest li:nth-child(2)")
            tools.wait_for("document.querySelector('#nbest li:nth-child(2)').className === 'chosen'")
            second = json.loads(tools.evaluate(STATE))
            tools.click("#nbest li:nth-child(1)")  # back to the best one for the screenshot
        completed = None
        if prefix is not None:
            tools.evaluate("document.getElementById('prefix').focus()")
            tools.call("Input.insertText", text=prefix)
            tools.wait_for(f"(function () {{ var d = document.querySelector('#translation div.line'); "
                           f"return !!d && d.textContent.indexOf({json.dumps(prefix)}) === 0 && "
                           "document.querySelectorAll('#heatmap td.cell').length > 0; })()")
            completed = json.loads(tools.evaluate(STATE))
        if screenshot:
            shot = tools.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
            with open(screenshot, "wb") as out:
                out.write(base64.b64decode(shot["data"]))
        print(json.dumps({"first": first, "second": second, "completed": completed}))
    finally:
        process.kill()
        process.wait()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    main()
