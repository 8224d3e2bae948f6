#!/usr/bin/env python3
"""Sends nmt-serve MEGABYTES of HTTP framing and reports the server's memory (serve_test.sh).

Usage: framing_flood.py PORT SERVER_PID MODE MEGABYTES
MODE: chunk-extensions (one request: 1-byte chunks, each with a 1 KB extension),
      trailers (chunked requests ending in trailer lines, again and again),
      headers (requests with header lines, again and again).
Prints "sent_mb peak_growth_mb after_mb": what was sent, the server's RSS growth at its
peak while sending (sampled every 20 ms), and its growth 1 s after the client left.
"""
import socket
import sys
import threading
import time

port, pid, mode, megabytes = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
goal = megabytes << 20


def rss_mb():
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise SystemExit("no VmRSS")


start = rss_mb()
peak = start
sending = True


def sample():
    global peak
    while sending:
        peak = max(peak, rss_mb())
        time.sleep(0.02)


sampler = threading.Thread(target=sample)
sampler.start()
post = b"POST /v1/translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
if mode == "chunk-extensions":
    opening = post + b"Transfer-Encoding: chunked\r\n\r\n"
    piece = (b"1;" + b"e" * 1000 + b"\r\n{\r\n") * 64
elif mode == "trailers":
    opening = post + b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n"
    piece = b"X-Trailer: " + b"t" * 1000 + b"\r\n"
elif mode == "headers":
    opening = post
    piece = b"X-Header: " + b"h" * 1000 + b"\r\n"
else:
    raise SystemExit(f"unknown mode {mode}")

sent = 0
connections = 0
deadline = time.time() + 60
while sent < goal and time.time() < deadline:
    connections += 1
    with socket.create_connection(("127.0.0.1", port)) as client:
        try:
            client.sendall(opening)
            sent += len(opening)
            while sent < goal:
                client.sendall(piece * 16)
                sent += len(piece) * 16
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused at a limit: the next connection goes on
sending = False
sampler.join()
time.sleep(1)
print(f"{sent / 2**20:.0f} {peak - start:.0f} {rss_mb() - start:.0f} ({connections} connections)")
