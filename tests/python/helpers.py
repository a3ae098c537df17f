"""Small helpers shared by the test modules."""

import time


def wait_until(cond, timeout=5.0, interval=0.005):
    """Polls `cond` until it is true; fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        if cond():
            return
        if time.monotonic() > deadline:
            raise AssertionError("condition not met within %.1fs" % timeout)
        time.sleep(interval)
