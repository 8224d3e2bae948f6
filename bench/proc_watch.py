#!/usr/bin/env python3
"""Runs a command and reports, as one JSON line on stdout: wall seconds, the peak of VmRSS,
RssAnon (heap) and RssFile (mapped files) of the process and its descendants (each process
separately: the largest of each), and the seconds until the first stderr line that matches
each --mark regex. The command's stderr is copied to --stderr FILE.

  bench/proc_watch.py --mark start='start-up took' --mark step1='^step +1 ' -- build/bin/nmt-train ...
"""
import argparse, json, os, re, subprocess, sys, threading, time

def status_fields(pid):
    fields = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "RssAnon", "RssFile"):
                    fields[key] = int(value.split()[0]) * 1024
    except OSError:
        pass
    return fields

def descendants(pid):
    found, frontier = [pid], [pid]
    while frontier:
        parent = frontier.pop()
        try:
            with open(f"/proc/{parent}/task/{parent}/children") as f:
                children = [int(c) for c in f.read().split()]
        except OSError:
            children = []
        found += children
        frontier += children
    return found

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mark", action="append", default=[], help="NAME=REGEX on stderr")
    parser.add_argument("--stderr", default="/dev/null")
    parser.add_argument("--interval", type=float, default=0.05)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command and args.command[0] == "--" else args.command
    marks = [(name, re.compile(regex)) for name, _, regex in (m.partition("=") for m in args.mark)]
    start = time.monotonic()
    process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    seen, peaks = {}, {"VmRSS": 0, "RssAnon": 0, "RssFile": 0}

    def read_stderr():
        with open(args.stderr, "w") as log:
            for raw in process.stderr:
                line = raw.decode("utf-8", "replace")
                log.write(line)
                for name, regex in marks:
                    if name not in seen and regex.search(line):
                        seen[name] = time.monotonic() - start
    reader = threading.Thread(target=read_stderr)
    reader.start()
    while process.poll() is None:
        for pid in descendants(process.pid):
            for key, value in status_fields(pid).items():
                peaks[key] = max(peaks[key], value)
        time.sleep(args.interval)
    reader.join()
    result = {"exit": process.returncode, "seconds": round(time.monotonic() - start, 2),
              "peak_rss_mib": round(peaks["VmRSS"] / 2**20, 1), "peak_rss_anon_mib": round(peaks["RssAnon"] / 2**20, 1),
              "peak_rss_file_mib": round(peaks["RssFile"] / 2**20, 1)}
    for name, _ in marks:
        result[name] = round(seen[name], 2) if name in seen else None
    print(json.dumps(result))
    sys.exit(process.returncode)

if __name__ == "__main__":
    main()
