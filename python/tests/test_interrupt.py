"""Ctrl+C during a long call raises KeyboardInterrupt promptly, from inside the call."""

import signal
import subprocess
import sys
import textwrap
import time

CHILD = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    import topoview

    a = np.random.default_rng(0).random((256, 256, 256)).astype(np.float32)
    def progress(f):
        if f > 0 and not progress.said:
            progress.said = True
            print("started", flush=True)
    progress.said = False
    try:
        topoview.ecc(a, smooth=12.0, backend="cpu", progress=progress)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(3)
    print("finished", flush=True)
    """
)


def test_ctrl_c_interrupts_a_long_call():
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "started"
        sent = time.perf_counter()
        child.send_signal(signal.SIGINT)
        rest = child.stdout.read()
        child.wait(timeout=60)
        latency = time.perf_counter() - sent
    finally:
        child.kill()
    assert (child.returncode, rest.strip()) == (3, "interrupted")
    assert latency < 2.0, f"{latency:.2f} s from SIGINT to KeyboardInterrupt"
