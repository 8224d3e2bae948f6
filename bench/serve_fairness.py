#!/usr/bin/env python3
"""A polite client beside greedy ones on one nmt-serve: the polite client sends one line
once a second; each greedy connection sends requests of LINES lines back to back, as fast
as the server answers. Prints the polite client's latency (median, p90, max), what the
greedy connections got done, and the lines the server translated per second while the
polite client ran (its /health counter: lines of requests still in progress count too). All clients share one address (127.0.0.1), so fairness by
address alone could not tell them apart.

usage: serve_fairness.py PORT SOURCE_FILE [GREEDY=64] [SECONDS=30] [LINES=64]"""
import http.client
import json
import statistics
import sys
import threading
import time

port, source = int(sys.argv[1]), sys.argv[2]
greedy = int(sys.argv[3]) if len(sys.argv) > 3 else 64
seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 30
lines_per_request = int(sys.argv[5]) if len(sys.argv) > 5 else 64
sentences = [l.strip() for l in open(source, encoding="utf-8") if l.strip()]
stop = time.monotonic() + seconds
done = {"requests": 0, "lines": 0, "refused": 0}
lock = threading.Lock()


def post(connection, lines):
    body = json.dumps({"text": lines})
    connection.request("POST", "/v1/translate", body, {"Content-Type": "application/json"})
    answer = connection.getresponse()
    answer.read()
    return answer.status


def translated_lines():
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request("GET", "/health")
    lines = json.loads(connection.getresponse().read())["lines"]
    connection.close()
    return lines, time.monotonic()


def greedy_client(index):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    offset = index * lines_per_request
    while time.monotonic() < stop:
        lines = [sentences[(offset + k) % len(sentences)] for k in range(lines_per_request)]
        offset += lines_per_request
        try:
            status = post(connection, lines)
        except (OSError, http.client.HTTPException):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
            continue
        with lock:
            if status == 200:
                done["requests"] += 1
                done["lines"] += lines_per_request
            else:
                done["refused"] += 1


threads = [threading.Thread(target=greedy_client, args=(i,), daemon=True) for i in range(greedy)]
for thread in threads:
    thread.start()
time.sleep(min(3.0, seconds / 5))  # the greedy ones fill the queue first
latencies, statuses = [], []
k = 0
lines_before, measured_from = translated_lines()
while time.monotonic() < stop:
    started = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    statuses.append(post(connection, [sentences[k % len(sentences)]]))
    connection.close()
    latencies.append(time.monotonic() - started)
    k += 1
    time.sleep(max(0.0, 1.0 - (time.monotonic() - started)))
lines_after, measured_to = translated_lines()
latencies.sort()
p90 = latencies[min(len(latencies) - 1, int(0.9 * len(latencies)))]
print("polite: %d requests, median %.2f s, p90 %.2f s, max %.2f s, statuses %s" %
      (len(latencies), statistics.median(latencies), p90, latencies[-1], sorted(set(statuses))))
print("greedy: %d connections x %d lines: %d requests answered (%d lines), %d refused, in %.0f s" %
      (greedy, lines_per_request, done["requests"], done["lines"], done["refused"], seconds))
print("server: %.1f lines/s translated while the polite client ran (%d lines in %.1f s)" %
      ((lines_after - lines_before) / (measured_to - measured_from), lines_after - lines_before,
       measured_to - measured_from))
