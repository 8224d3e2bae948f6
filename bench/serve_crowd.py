#!/usr/bin/env python3
"""Real clients beside a crowd of slow connections on one nmt-serve. ADDRESSES loopback
addresses (127.0.0.2, 127.0.0.3, ...) each hold PER_ADDRESS connections that send a request
line and then one header byte every few seconds, never finishing; a connection the server
closes is opened again at once, as bots do. Meanwhile, from 127.0.0.1, a /health check every
0.5 s and a one-line translation every second, each with a TIMEOUT. Prints both latencies
(median, p90, max), how many timed out or were refused, and how often the crowd was cut off.

usage: serve_crowd.py PORT SOURCE_FILE [ADDRESSES=199] [PER_ADDRESS=6] [SECONDS=40] [TIMEOUT=40]"""
import http.client
import json
import selectors
import socket
import statistics
import sys
import threading
import time

port, source = int(sys.argv[1]), sys.argv[2]
addresses = int(sys.argv[3]) if len(sys.argv) > 3 else 199
per_address = int(sys.argv[4]) if len(sys.argv) > 4 else 6
seconds = float(sys.argv[5]) if len(sys.argv) > 5 else 40
timeout = float(sys.argv[6]) if len(sys.argv) > 6 else 40
sentences = [l.strip() for l in open(source, encoding="utf-8") if l.strip()]
stop = time.monotonic() + seconds
crowd = {"opened": 0, "closed_by_server": 0, "refused": 0}


def open_bot(selector, address):
    bot = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    bot.setblocking(False)
    bot.bind((address, 0))
    try:
        bot.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    except OSError:
        crowd["refused"] += 1
        bot.close()
        return
    selector.register(bot, selectors.EVENT_READ, {"address": address, "sent": False, "next": time.monotonic()})
    crowd["opened"] += 1


def run_crowd():
    selector = selectors.DefaultSelector()
    for a in range(addresses):
        address = "127.0.%d.%d" % ((a + 2) // 256, (a + 2) % 256)
        for _ in range(per_address):
            open_bot(selector, address)
    while time.monotonic() < stop:
        now = time.monotonic()
        for key in list(selector.get_map().values()):
            state = key.data
            if now < state["next"]:
                continue
            try:
                key.fileobj.send(b"POST /v1/translate HTTP/1.1\r\nHost: crowd\r\n" if not state["sent"] else b"X")
                state["sent"] = True
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                pass  # closed: seen as readable below
            state["next"] = now + 3.0
        for key, _ in selector.select(timeout=0.2):
            try:
                data = key.fileobj.recv(4096)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                data = b""
            if data:
                continue  # an answer (408, 503): the server closes next
            selector.unregister(key.fileobj)
            key.fileobj.close()
            crowd["closed_by_server"] += 1
            if time.monotonic() < stop:
                open_bot(selector, key.data["address"])
    for key in list(selector.get_map().values()):
        key.fileobj.close()


def timed(request):
    started = time.monotonic()
    try:
        return request(), time.monotonic() - started
    except (OSError, http.client.HTTPException):
        return None, time.monotonic() - started


def health():
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    connection.request("GET", "/health")
    answer = connection.getresponse()
    answer.read()
    connection.close()
    return answer.status


def translate(k):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    connection.request("POST", "/v1/translate", json.dumps({"text": [sentences[k % len(sentences)]]}),
                       {"Content-Type": "application/json"})
    answer = connection.getresponse()
    answer.read()
    connection.close()
    return answer.status


results = {"health": [], "translate": []}


def probe(name, request, period):
    k = 0
    while time.monotonic() < stop:
        started = time.monotonic()
        results[name].append(timed(lambda: request(k)))
        k += 1
        time.sleep(max(0.0, period - (time.monotonic() - started)))


crowd_thread = threading.Thread(target=run_crowd, daemon=True)
crowd_thread.start()
time.sleep(min(5.0, seconds / 4))  # the crowd connects first
probes = [threading.Thread(target=probe, args=("health", lambda k: health(), 0.5)),
          threading.Thread(target=probe, args=("translate", translate, 1.0))]
for thread in probes:
    thread.start()
for thread in probes:
    thread.join()
crowd_thread.join()
print("crowd: %d addresses x %d connections: %d opened, %d closed by the server, %d refused at connect" %
      (addresses, per_address, crowd["opened"], crowd["closed_by_server"], crowd["refused"]))
for name, outcomes in results.items():
    latencies = sorted(t for status, t in outcomes if status == 200)
    failed = [status for status, _ in outcomes if status != 200]
    if latencies:
        p90 = latencies[min(len(latencies) - 1, int(0.9 * len(latencies)))]
        print("%-9s %d requests: median %.3f s, p90 %.3f s, max %.3f s; %d not answered 200 (%s)" %
              (name, len(outcomes), statistics.median(latencies), p90, latencies[-1], len(failed),
               ", ".join(sorted({str(s) for s in failed})) or "-"))
    else:
        print("%-9s %d requests: none answered 200 (%s)" % (name, len(outcomes), sorted({str(s) for s in failed})))
