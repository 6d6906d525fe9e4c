"""Ctrl+C during a long call raises KeyboardInterrupt promptly, from inside the call; calls
run on one worker thread."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import topoview

CHILD = textwrap.dedent(
    """
    import signal, sys, time
    import numpy as np
    import topoview

    # A process started from a background job inherits SIGINT ignored, and Python then leaves
    # it ignored (no KeyboardInterrupt at all): what a user's Ctrl+C meets is the default.
    signal.signal(signal.SIGINT, signal.default_int_handler)

    a = np.random.default_rng(0).random((256, 256, 256)).astype(np.float32)
    def progress(f):
        if f > 0 and not progress.said:
            progress.said = True
            print("started", flush=True)
    progress.said = False
    try:
        # Calls back to back: one is under way whenever the signal comes.
        for _ in range(60):
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


def _workers():
    """Thread ids of this process's threads named topoview-python."""
    tasks = "/proc/self/task"
    return [t for t in os.listdir(tasks) if open(f"{tasks}/{t}/comm").read().strip() == "topoview-python"]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_calls_share_one_worker_thread():
    """Every call runs on the same worker thread, which outlives the calls (the GPU backend
    keeps a handle per thread that uses it: a thread per call would leave one behind each)."""
    a = np.random.default_rng(0).random((32, 32)).astype(np.float32)
    topoview.ecc(a, backend="cpu")
    first = _workers()
    assert len(first) == 1
    for _ in range(50):
        topoview.ecc(a, backend="auto")
        topoview.smooth(a, 1.0, backend="auto")
    assert _workers() == first
