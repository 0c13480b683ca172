#!/usr/bin/env python3
"""Replays a recorded Claude Code session through the real `solaria hook` binary.

    replay.py SESSION.jsonl --solaria BIN --cwd DIR [--session ID] [--transcript PATH]

Each line of SESSION.jsonl is {"event": ..., "payload": {...}}; the placeholders
__CWD__, __TRANSCRIPT__ and __SESSION__ are substituted, then the payload is piped to
`BIN hook EVENT` exactly as Claude Code would (JSON on stdin). SOLARIA_HOME and the
rest of the environment pass through. Prints one line per event with its time, and
fails if a hook exits non-zero or writes to stderr (the hook contract).
"""

import argparse
import json
import subprocess
import sys
import time
import uuid


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("session_file")
    ap.add_argument("--solaria", required=True)
    ap.add_argument("--cwd", required=True)
    ap.add_argument("--session", default=str(uuid.uuid4()))
    ap.add_argument("--transcript", default="/nonexistent/transcript.jsonl")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()

    timings = []
    with open(args.session_file, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            text = (
                line.replace("__CWD__", args.cwd.replace("\\", "\\\\"))
                .replace("__TRANSCRIPT__", args.transcript)
                .replace("__SESSION__", args.session)
            )
            record = json.loads(text)
            event, payload = record["event"], json.dumps(record["payload"])
            start = time.perf_counter()
            done = subprocess.run(
                [args.solaria, "hook", event],
                input=payload.encode(),
                capture_output=True,
            )
            ms = (time.perf_counter() - start) * 1000
            timings.append(ms)
            if done.returncode != 0 or done.stderr:
                print(f"line {n}: hook {event} broke the contract: rc={done.returncode} stderr={done.stderr!r}", file=sys.stderr)
                return 1
            if not args.quiet:
                tool = record["payload"].get("tool_name", "")
                print(f"  {event:<22} {tool:<24} {ms:6.1f} ms")
    timings.sort()
    print(f"  replayed {len(timings)} events; median {timings[len(timings) // 2]:.1f} ms, slowest {timings[-1]:.1f} ms per hook process")
    return 0


if __name__ == "__main__":
    sys.exit(main())
