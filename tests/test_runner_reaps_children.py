"""Ctrl-C kills the worker processes and also reaps them: a killed child that nobody waits for stays a zombie
(it still shows up in ps / pgrep for its process group) until init gets round to it — seen as 1.4-2 s after Ctrl-C
for 05's ProcessPoolExecutor workers on a VM whose init reaps slowly."""
import multiprocessing as mp
import os
import time

import pytest

import runner

pytestmark = pytest.mark.quiet      # 量时间（Ctrl-C、超时）：conftest 让它们最先跑（后台的优先级低）


def _sleep():
    time.sleep(60)


@pytest.mark.skipif(not os.path.exists("/proc/self/stat") or "fork" not in mp.get_all_start_methods(),
                    reason="needs /proc and fork")
def test_kill_children_leaves_no_zombie():
    p = mp.get_context("fork").Process(target=_sleep)
    p.start()
    pid = p.pid
    try:
        runner._kill_children()
        assert not os.path.exists(f"/proc/{pid}"), open(f"/proc/{pid}/stat").read()
    finally:
        if p.is_alive():
            p.kill()
        p.join()
