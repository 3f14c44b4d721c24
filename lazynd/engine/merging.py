"""Merging a dependent CPU operation into the one pushed just before it (MXNet's engine bulk).

A program that pushes a chain of dependent operations faster than they run (a training
loop: forward, backward, update, forward...) pays the engine's bookkeeping for each: every
var queued on at push, released at completion.  With 12-16 vars an operation (an executor's
pass) that was 9-10 us an operation, 4% of an MNIST epoch.  Such an operation can instead
join the operation pushed just before it, which has not started: the two run as one, in push
order, on one thread, and the vars are granted and released once for all of them.

:func:`merge_into` decides and does it, under the engine lock.  It merges ``op`` into ``tail``
(the last operation pushed, still waiting for its vars or deferred, so no thread runs it yet)
only if that cannot change what runs before what:

- ``op`` depends on ``tail``: it writes a var ``tail`` uses, or reads one ``tail`` writes (an
  independent operation, readers of the same var included, is never merged: it may run in
  parallel);
- on every var ``op`` shares with ``tail``, nothing is queued after ``tail``;
- every other var of ``op``: ``tail`` claims it too, at the end of its queue if it is busy, as
  if ``tail`` had been pushed with it (then ``tail`` may wait for something only a later part
  needs; a chain's parts wait for each other anyway).  The deferred operation, which is ready
  and must stay so, takes only free ones;
- where ``op`` writes a var ``tail`` only reads, ``tail``'s claim becomes a write: its queued
  entry is the var's last, or it is the var's only reader;
- ``tail`` has fewer than :data:`MAX_PARTS` parts: a wait on the first part's output waits for
  the whole merged operation, so merging stays bounded.

A known hazard follows from that last rule: a part that blocks until the thread waiting on an
earlier part's output goes on (a pushed Python function that waits for an event the program
sets after ``wait_to_read`` returns) stalls that wait for good, where the plain policy's wait
returns.  Help while waiting (:mod:`.policy`) does not cause it and cannot avoid it; turning
a var's write claim into a read after the last part that writes it, and releasing the var
after the last part that uses it, would.

Each part keeps its own function, input checks, outputs and name: a failing part records its
error on its own outputs, later parts that read them are skipped with that error, and the
profiler sees every part under its own name (see :meth:`lazynd.engine.base.Engine._run`).
"""

from __future__ import annotations

from typing import cast

from .operation import Operation

# parts a merged operation may hold; 8 removes most of the bookkeeping of a chain while a wait
# on an early part's output waits for at most 7 more operations
MAX_PARTS = 8


def merge_into(tail: Operation, op: Operation) -> bool:
    """Make ``op`` the next part of ``tail`` if the rules above allow it (engine lock held)."""
    parts = tail.parts
    if parts is not None and len(parts) >= MAX_PARTS:
        return False
    access = tail.access
    if access is None:
        # the common refusal first, without building the map: op does not depend on tail
        if not op.depends_on(tail):
            return False
        access = dict.fromkeys(tail.reads, False)
        access.update(dict.fromkeys(tail.writes, True))
    waiting = tail.wait > 0  # else tail is the deferred operation: ready, and must stay so
    shared = False
    for v in op.reads:
        mode = access.get(v)
        if mode is None:
            if not waiting and not v.ready_for_read():
                return False
        else:
            if not v.nothing_queued_after(tail):
                return False
            shared = shared or mode  # reading what tail writes: op waits for tail
    for v in op.writes:
        mode = access.get(v)
        if mode is None:
            if not waiting and not v.ready_for_write():
                return False
        else:
            if not (v.nothing_queued_after(tail) if mode else v.can_upgrade_read(tail)):
                return False  # (a read of tail's beside other readers cannot become a write now)
            shared = True
    if not shared:
        return False

    if parts is None:
        # the first merge: the var lists become tail's own (they may be its pusher's lists)
        tail.parts = parts = [(tail.fn, tail.args, tail.checks, tail.writes, tail.name)]
        tail.reads, tail.writes = list(tail.reads), list(tail.writes)
        tail.access = access
    reads, writes = cast(list, tail.reads), cast(list, tail.writes)
    for v in op.reads:
        if v not in access:
            v.request_read(tail)  # if busy, tail waits for it too, behind everything pushed before
            access[v] = False
            reads.append(v)
    for v in op.writes:
        mode = access.get(v)
        if mode is None:
            v.request_write(tail)
            access[v] = True
            writes.append(v)
        elif mode is False:  # tail's read becomes a write
            v.upgrade_read(tail)
            access[v] = True
            reads.remove(v)
            writes.append(v)
    parts.append((op.fn, op.args, op.checks, op.writes, op.name))
    return True
