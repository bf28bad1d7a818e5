"""The one peak-memory sampler (helpers.course.memory): what a group of processes holds, and its peak."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import psutil
import pytest

from helpers.course import memory
from helpers.errors import InputError

MB = 2**20
#: Holds 300 MB (touched), forks a child that holds them too, unchanged, and waits to be killed.
FORKED_HOLDING = """
import os, sys, time
block = bytearray(300 * 2**20)
for i in range(0, len(block), 4096):
    block[i] = 1
if os.fork() == 0:
    time.sleep(3600)
print("ready", flush=True)
time.sleep(3600)
"""


def _holding(code: str) -> subprocess.Popen:
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "ready"
    return process


def _end(process: subprocess.Popen) -> None:
    for child in psutil.Process(process.pid).children(recursive=True):
        child.kill()
    process.kill()
    process.wait()


def test_pages_a_forked_child_shares_with_its_parent_count_once():
    process = _holding(FORKED_HOLDING)
    try:
        processes = memory.tree(process.pid)()
        assert len(processes) == 2
        resident = sum(p.memory_info().rss for p in processes)
        held = memory.held(processes)
        assert resident >= 600 * MB  # each resident size counts the shared 300 MB
        assert 300 * MB <= held < 450 * MB
    finally:
        _end(process)


def test_memory_files_count_although_no_resident_size_shows_them():
    code = ("import os, time\nfd = os.memfd_create('kept')\nos.write(fd, bytes(200 * 2**20))\n"
            "print('ready', flush=True)\ntime.sleep(3600)")
    process = _holding(code)
    try:
        processes = memory.tree(process.pid)()
        assert memory.memory_files(processes) == 200 * MB
        assert memory.held(processes) >= 200 * MB + memory.unique_memory(process.pid)
    finally:
        _end(process)


def test_the_sampler_keeps_the_peak_of_what_a_tree_held_and_its_cpu_time():
    code = ("import time\nblock = bytearray(250 * 2**20)\nfor i in range(0, len(block), 4096):\n"
            "    block[i] = 1\nsum(range(3 * 10**7))\nprint('ready', flush=True)\ntime.sleep(3600)")
    process = _holding(code)
    with memory.PeakSampler(memory.tree(process.pid), interval=0.05) as sampler:
        try:
            held = sampler.sample()  # one count while the child holds its block, whatever the thread saw
            assert sampler.cpu_seconds() >= psutil.Process(process.pid).cpu_times().user * 0.9 > 0
        finally:
            _end(process)
    assert held >= 250 * MB
    assert sampler.peak_bytes >= 250 * MB  # kept after the process ended


#: Holds 100 MB; each line read from stdin adds 100 MB more (touched) and says "grown".
GROWING = """
import sys
blocks = []
def grow():
    block = bytearray(100 * 2**20)
    for i in range(0, len(block), 4096):
        block[i] = 1
    blocks.append(block)
grow()
print("ready", flush=True)
for _ in sys.stdin:
    grow()
    print("grown", flush=True)
"""


def test_the_sampler_counts_exactly_only_when_a_count_could_be_a_new_peak_or_past_the_limit(monkeypatch):
    clock = [0.0]  # the sampler's clock, moved by hand: a busy machine must not change what it does
    monkeypatch.setattr(memory, "_clock", lambda: clock[0])
    process = subprocess.Popen([sys.executable, "-c", GROWING], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "ready"
        sampler = memory.PeakSampler(memory.tree(process.pid))  # sampled by hand here, no thread
        first = sampler.sample()
        assert sampler.exact_counts == 1 and sampler.peak_bytes == first >= 100 * MB
        steady = [sampler.sample() for _ in range(20)]  # no time passes
        assert sampler.exact_counts == 1, "a group that did not grow was counted again"
        assert all(bound >= memory.held(memory.tree(process.pid)()) for bound in steady)
        process.stdin.write("grow\n")
        process.stdin.flush()
        assert process.stdout.readline().strip() == "grown"
        grown = sampler.sample()  # 100 MB more: a possible peak, counted at once
        assert sampler.exact_counts == 2 and sampler.peak_bytes == grown >= first + 95 * MB
        clock[0] += memory.EXACT_SECONDS * 0.9
        sampler.sample()
        assert sampler.exact_counts == 2
        clock[0] += memory.EXACT_SECONDS * 0.1
        sampler.sample()
        assert sampler.exact_counts == 3, "no exact count after EXACT_SECONDS"

        limited = memory.PeakSampler(memory.tree(process.pid), exact_above=150 * MB)
        for _ in range(5):
            limited.sample()
        assert limited.exact_counts == 5, "above the limit, a sample must be an exact count"
    finally:
        _end(process)


#: Holds 100 MB (touched) and forks; the child, told to, writes to every page of the block.
COPY_ON_WRITE = """
import os, sys, time
block = bytearray(100 * 2**20)
for i in range(0, len(block), 4096):
    block[i] = 1
if os.fork() == 0:
    print("ready", flush=True)
    sys.stdin.readline()
    for i in range(0, len(block), 4096):
        block[i] = 2
    print("written", flush=True)
time.sleep(3600)
"""


def test_a_copy_on_write_which_leaves_the_resident_size_as_it_was_is_counted(monkeypatch):
    monkeypatch.setattr(memory, "_clock", lambda: 0.0)  # no count is due to time
    process = subprocess.Popen([sys.executable, "-c", COPY_ON_WRITE], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "ready"
        sampler = memory.PeakSampler(memory.tree(process.pid))
        shared = sampler.sample()  # parent and child share the block: counted once
        assert 100 * MB <= shared < 160 * MB
        process.stdin.write("go\n")
        process.stdin.flush()
        assert process.stdout.readline().strip() == "written"
        assert sampler.sample() >= shared + 90 * MB and sampler.exact_counts == 2
        assert sampler.peak_bytes >= shared + 90 * MB
    finally:
        _end(process)


def test_children_are_what_this_process_started():
    process = _holding("import time\nprint('ready', flush=True)\ntime.sleep(3600)")
    try:
        assert process.pid in {p.pid for p in memory.children()()}
    finally:
        _end(process)
    assert process.pid not in {p.pid for p in memory.children()()}


def test_after_each_sample_the_caller_sees_what_was_held_and_the_sampling_ends_with_its_root():
    process = _holding("import time\nprint('ready', flush=True)\ntime.sleep(3600)")
    seen = []
    sampler = memory.PeakSampler(memory.tree(process.pid), interval=0.05,
                                 after_sample=lambda processes, held: seen.append((len(processes), held)))
    sampler.start()
    try:
        assert sampler.sample() > 0
        assert sampler.running
    finally:
        _end(process)
    assert sampler.wait(timeout=60), "the sampling outlived the process it sampled"
    sampler.stop()
    assert seen and all(count == 1 for count, _ in seen)
    # A sample taken as the process ends (killed, not yet reaped) finds it holding nothing:
    # every sample before that one saw what it held.
    held = [held for _, held in seen]
    alive = held.index(0) if 0 in held else len(held)
    assert alive > 0 and not any(held[alive:]), held


@pytest.mark.parametrize(("arguments", "message"), [
    ({"processes": [1, 2]}, "must be a function listing the processes"),
    ({"processes": memory.children(), "interval": 0}, "interval must be a positive number"),
    ({"processes": memory.children(), "exact_above": -1}, "exact_above must be a whole number of bytes"),
    ({"processes": memory.children(), "exact_above": 1.5}, "exact_above must be a whole number of bytes"),
])
def test_the_sampler_refuses_what_it_cannot_sample(arguments, message):
    with pytest.raises(InputError, match=message):
        memory.PeakSampler(**arguments)


def _children_faults() -> int:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_minflt + usage.ru_majflt


def test_page_faults_are_the_kernel_s_count_and_nothing_for_a_process_gone():
    code = ("import sys\nblock = bytearray(50 * 2**20)\nfor i in range(0, len(block), 4096):\n"
            "    block[i] = 1\nprint('ready', flush=True)\nsys.stdin.readline()")
    before = _children_faults()
    process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True)
    assert process.stdout.readline().strip() == "ready"
    seen = memory.page_faults(process.pid)
    process.communicate("exit\n")
    taken = _children_faults() - before  # its whole life: reaped
    assert taken / 2 < seen <= taken  # a few more faults while it exited
    assert memory.page_faults(process.pid) == 0


def test_only_a_tmpfs_mounted_there_counts_as_in_memory_files():
    """A job's process setting up its namespace can see a disk at /tmp: its use is not memory
    (a CI run once stopped a job for "38,423 MB", the root disk's use, 9 ms after it began)."""
    root_kind = next(fields[fields.index("-") + 1] for fields in map(str.split, open("/proc/self/mountinfo"))
                     if fields[4] == "/")
    assert memory._tmpfs_at(os.getpid(), "/") == (root_kind == "tmpfs")
    assert memory._tmpfs_at(os.getpid(), "/no/such/mount") is False
    assert memory._tmpfs_at(2**22 + 1, "/dev/shm") is False  # no such process
    shm = [fields[fields.index("-") + 1] for fields in map(str.split, open("/proc/self/mountinfo"))
           if fields[4] == "/dev/shm"]
    assert memory._tmpfs_at(os.getpid(), "/dev/shm") == (bool(shm) and shm[-1] == "tmpfs")
